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
)

// goldenDir is where Delta's own golden tables live, beside the repository
// (see shared/delta-golden/README.md for what each exercises).
const goldenDir = "../../shared/delta-golden"

func golden(t testing.TB, name string) *Table {
	t.Helper()
	dir := filepath.Join(goldenDir, name)
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("golden table %s missing (expected at %s beside the repository): %v", name, goldenDir, err)
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
