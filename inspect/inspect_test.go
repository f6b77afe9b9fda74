package inspect_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/inspect"
	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/table/icebergtable"
)

func TestInspect(t *testing.T) {
	cfg := bench.GenerateConfig{Table: "i.days", Rows: 300, Commits: 3, FormatVersion: 3, PartitionBy: "day(ts)", Seed: 7}
	cat, err := catalogs.Open(t.Context(), catalogs.Spec{Warehouse: t.TempDir()})
	require.NoError(t, err)
	_, err = bench.Generate(t.Context(), cat, cfg)
	require.NoError(t, err)
	it, err := icebergtable.Load(t.Context(), cat, cfg.Table)
	require.NoError(t, err)
	tbl := it.Describe()
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
