package inspect_test

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/inspect"
	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/table/catalogs"
)

func boundLE64(f float64) []byte { return binary.LittleEndian.AppendUint64(nil, math.Float64bits(f)) }

func boundLE32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }

// point encodes a geometry bound: little-endian float64 coordinates.
func geoBoundPoint(coords ...float64) []byte {
	var b []byte
	for _, c := range coords {
		b = append(b, boundLE64(c)...)
	}
	return b
}

func TestDecodeBound(t *testing.T) {
	tests := []struct {
		name string
		typ  iceberg.Type
		in   []byte
		want any
	}{
		{"double", iceberg.PrimitiveTypes.Float64, boundLE64(-179.5), -179.5},
		{"int", iceberg.PrimitiveTypes.Int32, boundLE32(uint32(0xFFFFFFFE)), int32(-2)},
		{"long", iceberg.PrimitiveTypes.Int64, binary.LittleEndian.AppendUint64(nil, 42), int64(42)},
		{"date", iceberg.PrimitiveTypes.Date, boundLE32(20454), "2026-01-01"},
		{"timestamptz", iceberg.PrimitiveTypes.TimestampTz, binary.LittleEndian.AppendUint64(nil, uint64(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixMicro())), time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)},
		{"string", iceberg.PrimitiveTypes.String, []byte("abc"), "abc"},
		{"geometry xy", iceberg.GeometryType{}, geoBoundPoint(1.5, -2), map[string]any{"x": 1.5, "y": -2.0}},
		{"geometry xyzm", iceberg.GeometryType{}, geoBoundPoint(1, 2, 3, 4), map[string]any{"x": 1.0, "y": 2.0, "z": 3.0, "m": 4.0}},
		{"geometry bad length", iceberg.GeometryType{}, []byte{1, 2, 3}, "010203"},
		{"double truncated", iceberg.PrimitiveTypes.Float64, []byte{1, 2}, "0102"},
		{"binary", iceberg.PrimitiveTypes.Binary, []byte{0xde, 0xad}, "dead"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := inspect.DecodeBound(tc.typ, tc.in)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("DecodeBound (-want +got):\n%s", diff)
			}
		})
	}
}

func TestInspect(t *testing.T) {
	cfg := bench.GenerateConfig{Table: "i.days", Rows: 300, Commits: 3, FormatVersion: 3, PartitionBy: "day(ts)", Seed: 7}
	cat, err := catalogs.Open(t.Context(), catalogs.Spec{Warehouse: t.TempDir()})
	require.NoError(t, err)
	_, err = bench.Generate(t.Context(), cat, cfg)
	require.NoError(t, err)
	tbl, err := catalogs.LoadTable(t.Context(), cat, cfg.Table)
	require.NoError(t, err)
	tests := []struct {
		kind     inspect.Kind
		keys     []string // a subset of the columns, in order
		minRows  int
		checkRow func(t *testing.T, r inspect.Row)
	}{
		{inspect.Files, []string{"content", "file_path", "partition", "record_count", "file_size_in_bytes", "lower_bounds", "upper_bounds", "bbox"}, 3, func(t *testing.T, r inspect.Row) {
			bb, _ := r.Get("bbox")
			assert.IsType(t, spatial.Bound{}, bb, "bbox from the geometry bounds")
			lb, _ := r.Get("lower_bounds")
			if g, ok := lb.(map[string]any)["geometry"].(map[string]any); !ok || g["x"] == nil {
				t.Errorf("lower_bounds[geometry] = %#v, want {x,y}", lb.(map[string]any)["geometry"])
			}
			p, _ := r.Get("partition")
			if day, _ := p.(inspect.Row).Get("ts_day"); day == nil {
				t.Errorf("partition %#v has no ts_day", p)
			}
		}},
		{inspect.Snapshots, []string{"committed_at", "snapshot_id", "parent_id", "operation", "manifest_list", "summary"}, 3, func(t *testing.T, r inspect.Row) {
			if op, _ := r.Get("operation"); op != "append" {
				t.Errorf("operation %v, want append", op)
			}
			if at, _ := r.Get("committed_at"); time.Since(at.(time.Time)) > time.Hour {
				t.Errorf("committed_at %v is not recent", at)
			}
		}},
		{inspect.Manifests, []string{"content", "path", "length", "partition_spec_id", "added_snapshot_id", "added_data_files_count", "partition_summaries"}, 3, nil},
		{inspect.Partitions, []string{"partition", "spec_id", "record_count", "file_count", "total_data_file_size_in_bytes"}, 2, nil},
		{inspect.History, []string{"made_current_at", "snapshot_id", "parent_id", "is_current_ancestor"}, 3, nil},
	}
	for _, tc := range tests {
		t.Run(string(tc.kind), func(t *testing.T) {
			rows, err := inspect.Rows(t.Context(), tbl, tc.kind)
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) < tc.minRows {
				t.Fatalf("%d rows, want at least %d", len(rows), tc.minRows)
			}
			for _, r := range rows {
				var keys []string
				for _, f := range r {
					keys = append(keys, f.Key)
				}
				if !columnsInOrder(tc.keys, keys) {
					t.Fatalf("columns %v do not include %v in order", keys, tc.keys)
				}
				if tc.checkRow != nil {
					tc.checkRow(t, r)
				}
				if _, err := json.Marshal(r); err != nil {
					t.Fatalf("marshal row: %v", err)
				}
			}
		})
	}
	if _, err := inspect.ParseKind("refs"); err == nil {
		t.Error("ParseKind(refs) succeeded; want an error listing the kinds")
	}
}

func columnsInOrder(want, got []string) bool {
	i := 0
	for _, g := range got {
		if i < len(want) && g == want[i] {
			i++
		}
	}
	return i == len(want)
}

func TestRowMarshalKeepsOrder(t *testing.T) {
	r := inspect.Row{{Key: "z", Value: 1}, {Key: "a", Value: inspect.Row{{Key: "y", Value: "s"}, {Key: "b", Value: nil}}}}
	got, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"z":1,"a":{"y":"s","b":null}}`; string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
