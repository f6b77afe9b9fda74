package delta

import (
	"fmt"
	"sort"

	"errors"
	"github.com/apache/arrow-go/v18/arrow"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/internal/testing/testenv"
)

func golden(t testing.TB, name string) *Table {
	t.Helper()
	dir := filepath.Join(testenv.DeltaGolden(t), name)
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("golden table %s missing: %v", name, err)
	}
	tbl, err := OpenLocal(dir)
	require.NoError(t, err)
	return tbl
}

func filePaths(s *Snapshot) []string {
	out := make([]string, len(s.Files))
	for i, f := range s.Files {
		out[i] = f.Path
	}
	return out
}

func TestGoldenRefusals(t *testing.T) {
	t.Run("invalid protocol version", func(t *testing.T) {
		_, err := golden(t, "deltalog-invalid-protocol-version").Snapshot(t.Context())
		var pe *ProtocolVersionError
		require.ErrorAs(t, err, &pe)
		assert.Equal(t, 99, pe.Version)
		assert.Contains(t, err.Error(), "reader version 99")
	})
	t.Run("versions not contiguous", func(t *testing.T) {
		_, err := golden(t, "versions-not-contiguous").Snapshot(t.Context())
		var le *LogError
		require.ErrorAs(t, err, &le)
		assert.Equal(t, int64(1), le.Version)
		assert.Contains(t, err.Error(), "not contiguous")
	})
}

func TestGoldenCheckpoints(t *testing.T) {
	cases := []struct {
		table      string
		version    int64
		checkpoint int64
		files      int
	}{
		// 15 commits each adding file "<i>" and removing... see GoldenTables.scala "checkpoint".
		{"corrupted-last-checkpoint", 10, 10, 11},
		{"multi-part-checkpoint", 1, 1, 10},
		{"only-checkpoint-files", 2, 2, 7},
		{"v2-checkpoint-json", 2, 2, 4},
		{"v2-checkpoint-parquet", 2, 2, 4},
	}
	for _, tc := range cases {
		t.Run(tc.table, func(t *testing.T) {
			s, err := golden(t, tc.table).Snapshot(t.Context())
			require.NoError(t, err)
			assert.Equal(t, tc.version, s.Version)
			assert.Equal(t, tc.checkpoint, s.CheckpointVersion)
			assert.Len(t, s.Files, tc.files, "%v", filePaths(s))
		})
	}
}

var _ = errors.New

// readRows reads every live row of the latest snapshot as formatted strings
// of the given columns.
func readRows(t testing.TB, tbl *Table, cols ...string) []string {
	t.Helper()
	s, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	var out []string
	err = tbl.Read(t.Context(), s, ReadOptions{BatchSize: 7}, func(_ *Add, rec arrow.RecordBatch) error {
		idx := make([]int, len(cols))
		for i, c := range cols {
			found := rec.Schema().FieldIndices(c)
			require.Len(t, found, 1, "column %s", c)
			idx[i] = found[0]
		}
		for r := 0; r < int(rec.NumRows()); r++ {
			row := ""
			for i, j := range idx {
				if i > 0 {
					row += "|"
				}
				row += rec.Column(j).ValueStr(r)
			}
			out = append(out, row)
		}
		return nil
	})
	require.NoError(t, err)
	sort.Strings(out)
	return out
}

// partDVRows is what GoldenTables.scala's dv-partitioned-with-checkpoint and
// dv-with-columnmapping hold: (x%10, x, "foo"+x%5) for x in [0,50), less the
// rows with an even x below 30, deleted one by one.
func partDVRows() []string {
	var want []string
	for x := 0; x < 50; x++ {
		if x%2 == 0 && x < 30 {
			continue
		}
		want = append(want, fmt.Sprintf("%d|%d|foo%d", x%10, x, x%5))
	}
	sort.Strings(want)
	return want
}

func TestGoldenDeletionVectors(t *testing.T) {
	for _, name := range []string{"dv-partitioned-with-checkpoint", "dv-with-columnmapping"} {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, partDVRows(), readRows(t, golden(t, name), "part", "col1", "col2"))
		})
	}
}

func TestGoldenChurnAcrossCheckpoint(t *testing.T) {
	// "checkpoint": every version removes the previous file and adds the next,
	// checkpointed at 10; only the last file is live at 14.
	tbl := golden(t, "checkpoint")
	s, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	assert.Equal(t, int64(14), s.Version)
	assert.Equal(t, int64(10), s.CheckpointVersion)
	assert.Equal(t, []string{"15"}, filePaths(s))

	old, err := tbl.SnapshotAt(t.Context(), 5)
	require.NoError(t, err)
	assert.Equal(t, int64(-1), old.CheckpointVersion, "a version before the checkpoint replays JSON only")
	assert.Equal(t, []string{"6"}, filePaths(old))
	_, err = tbl.SnapshotAt(t.Context(), 15)
	require.Error(t, err)
}

func TestGoldenCorruptLastCheckpoint(t *testing.T) {
	// Copy the table and damage _last_checkpoint: listing must take over.
	src := filepath.Join(testenv.DeltaGolden(t), "corrupted-last-checkpoint")
	for name, content := range map[string]string{
		"garbage":         "{not json",
		"missing version": `{"version":99,"size":13}`,
		"removed":         "",
	} {
		t.Run(name, func(t *testing.T) {
			dir := copyTable(t, src)
			p := filepath.Join(dir, "_delta_log", "_last_checkpoint")
			if content == "" {
				require.NoError(t, os.Remove(p))
			} else {
				require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
			}
			tbl, err := OpenLocal(dir)
			require.NoError(t, err)
			s, err := tbl.Snapshot(t.Context())
			require.NoError(t, err)
			assert.Equal(t, int64(10), s.Version)
			assert.Equal(t, int64(10), s.CheckpointVersion)
			assert.Len(t, s.Files, 11)
		})
	}
}

func copyTable(t testing.TB, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	require.NoError(t, err)
	return dst
}

// TestGoldenRowCounts checks, on every golden table with data files, that the
// rows read equal the files' recorded numRecords less their deleted rows.
func TestGoldenRowCounts(t *testing.T) {
	cases := map[string]int64{
		"basic-with-inserts-deletes-checkpoint":    -1,
		"basic-with-vacuum-protocol-check-feature": 100,
		"data-reader-partition-values":             3,
		"data-skipping-basic-stats-all-types":      1,
		"dv-partitioned-with-checkpoint":           35,
		"dv-with-columnmapping":                    35,
		"log-replay-dv-key-cases":                  47,
		"multi-part-checkpoint":                    -1,
		"only-checkpoint-files":                    -1,
		"snapshot-vacuumed":                        -1,
		"table-with-columnmapping-mode-id":         6,
		"table-with-columnmapping-mode-name":       6,
		"v2-checkpoint-json":                       -1,
		"v2-checkpoint-parquet":                    -1,
	}
	for name, want := range cases {
		t.Run(name, func(t *testing.T) {
			tbl := golden(t, name)
			s, err := tbl.Snapshot(t.Context())
			require.NoError(t, err)
			var fromStats int64
			statsComplete := true
			for _, f := range s.Files {
				st, err := f.ParsedStats()
				require.NoError(t, err)
				if st == nil {
					statsComplete = false
					continue
				}
				fromStats += st.NumRecords
				if f.DeletionVector != nil {
					fromStats -= f.DeletionVector.Cardinality
				}
			}
			var got int64
			err = tbl.Read(t.Context(), s, ReadOptions{BatchSize: 3}, func(_ *Add, rec arrow.RecordBatch) error {
				got += rec.NumRows()
				return nil
			})
			require.NoError(t, err)
			if want >= 0 {
				assert.Equal(t, want, got)
			}
			if statsComplete {
				assert.Equal(t, fromStats, got, "rows read vs numRecords less deletions")
			}
			assert.Positive(t, got)
		})
	}
}

func TestGoldenDVKeyCases(t *testing.T) {
	// Three commits each replace the file's deletion vector: one logical file
	// stays, keyed by (path, DV id), with the last vector (3 rows deleted).
	s, err := golden(t, "log-replay-dv-key-cases").Snapshot(t.Context())
	require.NoError(t, err)
	require.Len(t, s.Files, 1)
	require.NotNil(t, s.Files[0].DeletionVector)
	assert.Equal(t, int64(3), s.Files[0].DeletionVector.Cardinality)
	assert.Len(t, s.Tombstones, 3, "the plain file and two superseded vectors")
}

func TestGoldenColumnMapping(t *testing.T) {
	for _, name := range []string{"table-with-columnmapping-mode-id", "table-with-columnmapping-mode-name"} {
		t.Run(name, func(t *testing.T) {
			tbl := golden(t, name)
			s, err := tbl.Snapshot(t.Context())
			require.NoError(t, err)
			assert.NotEqual(t, MappingNone, s.ColumnMapping())
			rows := readRows(t, tbl, "ByteType", "StringType", "nested_struct", "array_of_prims")
			assert.Equal(t, []string{
				"(null)|(null)|(null)|(null)",
				`0|0|{"aa":"0","ac":{"aca":0}}|[0,1]`,
				`1|1|{"aa":"1","ac":{"aca":1}}|[1,2]`,
				`2|2|{"aa":"2","ac":{"aca":2}}|[2,3]`,
				`3|3|{"aa":"3","ac":{"aca":3}}|[3,4]`,
				`4|4|{"aa":"4","ac":{"aca":4}}|[4,5]`,
			}, rows)
			// Stats are keyed by physical names.
			st, err := s.Files[0].ParsedStats()
			require.NoError(t, err)
			phys := s.Schema.Field("IntegerType").PhysicalName(s.ColumnMapping())
			assert.NotEqual(t, "IntegerType", phys)
			_, ok := st.Min(phys)
			assert.True(t, ok)
		})
	}
}

func TestGoldenPartitionValues(t *testing.T) {
	rows := readRows(t, golden(t, "data-reader-partition-values"),
		"value", "as_int", "as_long", "as_byte", "as_short", "as_boolean", "as_float", "as_double",
		"as_string", "as_string_lit_null", "as_date", "as_timestamp", "as_big_decimal", "as_nested_struct")
	assert.Equal(t, []string{
		`0|0|0|0|0|true|0|0|0|null|2021-09-08|2021-09-08T11:11:11Z|0|{"aa":"0","ab":"0","ac":{"aca":0,"acb":0}}`,
		`1|1|1|1|1|false|1|1|1|null|2021-09-08|2021-09-08T11:11:11Z|1|{"aa":"1","ab":"1","ac":{"aca":1,"acb":1}}`,
		`2|(null)|(null)|(null)|(null)|(null)|(null)|(null)|(null)|(null)|(null)|(null)|(null)|{"aa":"2","ab":"2","ac":{"aca":2,"acb":2}}`,
	}, rows)
}

func TestGoldenStats(t *testing.T) {
	s, err := golden(t, "data-skipping-basic-stats-all-types").Snapshot(t.Context())
	require.NoError(t, err)
	var withStats *Stats
	for _, f := range s.Files {
		st, err := f.ParsedStats()
		require.NoError(t, err)
		if st != nil && st.NumRecords == 1 {
			withStats = st
		}
	}
	require.NotNil(t, withStats)
	assert.True(t, withStats.Tight())
	for col, want := range map[string]any{
		"as_int": 0.0, "as_double": 0.0, "as_big_decimal": 0.0,
	} {
		v, ok := withStats.Min(col)
		require.True(t, ok, col)
		f, ok := Float(v)
		require.True(t, ok, col)
		assert.Equal(t, want, f, col)
	}
	v, ok := withStats.Max("as_date")
	require.True(t, ok)
	assert.Equal(t, "2000-01-01", v)
	n, ok := withStats.Nulls("as_string")
	require.True(t, ok)
	assert.Zero(t, n)
}

func TestGoldenVacuumProtocolCheck(t *testing.T) {
	s, err := golden(t, "basic-with-vacuum-protocol-check-feature").Snapshot(t.Context())
	require.NoError(t, err)
	assert.True(t, s.Protocol.HasReaderFeature("vacuumProtocolCheck"))
	assert.NoError(t, CheckWrite(s.Protocol, s.Metadata))
}
