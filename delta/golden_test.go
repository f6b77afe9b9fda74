package delta

import (
	"errors"
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
