package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCopiedWarehouseWarns copies a warehouse: its catalog still names the
// original's files, so every command on the copy warns on stderr, while
// the original and a warehouse reached through a link do not.
func TestCopiedWarehouseWarns(t *testing.T) {
	t.Parallel()
	wh := generated(t, 2)
	cp := filepath.Join(t.TempDir(), "copy")
	require.NoError(t, os.CopyFS(cp, os.DirFS(wh)))
	link := filepath.Join(t.TempDir(), "link")
	require.NoError(t, os.Symlink(wh, link))

	for _, args := range [][]string{
		{"orphans", "--table", "geo.t", "--dry-run"},
		{"expire", "--table", "geo.t", "--dry-run", "--json"},
		{"inspect", "files", "--table", "geo.t"},
		{"sql", "--dry-run", "CALL system.remove_orphan_files(table => 'geo.t')"},
	} {
		r := runCLI(t, cp, false, args...)
		require.Equal(t, exitOK, r.Code, "%v: %s", args, r.Stderr)
		assert.Contains(t, r.Stderr, "outside the warehouse "+cp, args)
		assert.Contains(t, r.Stderr, "Moving a warehouse", args)
		for _, ok := range []string{wh, link} {
			r = runCLI(t, ok, false, args...)
			require.Equal(t, exitOK, r.Code, "%v: %s", args, r.Stderr)
			assert.NotContains(t, r.Stderr, "outside the warehouse", args)
		}
	}
}

// TestInsideDirHadoopFileURI: Spark writes table locations as Hadoop's
// file:/path; a table there is inside the warehouse, not outside it.
func TestInsideDirHadoopFileURI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, loc := range []string{"file:" + dir + "/bench/points", "file://" + dir + "/bench/points", dir + "/bench/points"} {
		if !insideDir(loc, dir) {
			t.Errorf("%s is inside %s", loc, dir)
		}
	}
	if insideDir("file:/elsewhere/points", dir) {
		t.Errorf("file:/elsewhere/points is not inside %s", dir)
	}
}
