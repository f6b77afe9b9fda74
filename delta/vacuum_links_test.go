package delta

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestVacuumKeepsLinks moves a partition directory out of the table and
// links it back, and adds links of every kind: the linked partition is
// the table's data and stays readable, a link to a directory or to nothing
// is kept and reported, an unreferenced link to a file goes and its target
// stays, and nothing outside the table is deleted through a link.
func TestVacuumKeepsLinks(t *testing.T) {
	tbl := newTestTable(t, "none", nil)
	s := snap(t, tbl)
	appendFiles(t, tbl, writeFile(t, tbl, s, 1, 0, 10), writeFile(t, tbl, s, 2, 10, 20))
	want := ids(t, tbl)
	root := tbl.Store.(*LocalStorage).Root
	out := t.TempDir()
	require.NoError(t, os.Rename(filepath.Join(root, "part=1"), filepath.Join(out, "part=1")))
	require.NoError(t, os.Symlink(filepath.Join(out, "part=1"), filepath.Join(root, "part=1")))
	old := time.Now().Add(-30 * 24 * time.Hour)
	writeAged(t, out, old, "stray.parquet", "sub/deep.parquet", "part=1/unreferenced.parquet")
	links := map[string]string{
		"part=2/to-dir":           filepath.Join(out, "sub"),
		"part=2/dangling.parquet": filepath.Join(out, "missing.parquet"),
		"part=2/to-file.parquet":  filepath.Join(out, "stray.parquet"),
	}
	for l, to := range links {
		require.NoError(t, os.Symlink(to, filepath.Join(root, filepath.FromSlash(l))))
	}
	outBefore := listTree(t, out)
	cfg := VacuumConfig{Retain: 0, Force: true, Now: time.Now().Add(time.Hour)}

	for _, dry := range []bool{true, false} {
		cfg.DryRun = dry
		res, err := tbl.Vacuum(t.Context(), root, cfg)
		require.NoError(t, err)
		var files []string
		for _, f := range res.Files {
			files = append(files, f.Path)
		}
		assert.Equal(t, []string{"part=2/to-file.parquet"}, files, "dry run %v", dry)
		assert.Equal(t, []VacuumKept{
			{Path: "part=1", Reason: LinkDirectory},
			{Path: "part=2/dangling.parquet", Reason: linkDangling},
			{Path: "part=2/to-dir", Reason: LinkDirectory},
		}, res.Kept, "dry run %v", dry)
		assert.Equal(t, 3, res.KeptCount)
	}
	for l := range links {
		_, err := os.Lstat(filepath.Join(root, filepath.FromSlash(l)))
		if l == "part=2/to-file.parquet" {
			assert.ErrorIs(t, err, os.ErrNotExist, "the unreferenced link to a file was kept")
			continue
		}
		assert.NoError(t, err, "link %s was removed", l)
	}
	_, err := os.Lstat(filepath.Join(root, "part=1"))
	require.NoError(t, err, "the link to the partition directory was removed")
	assert.Equal(t, outBefore, listTree(t, out), "files outside the table changed")
	assert.Equal(t, want, ids(t, tbl))
}

// TestVacuumLinkedRoot vacuums a table whose directory is a link to where
// it lives: the listing goes through it and the orphan goes.
func TestVacuumLinkedRoot(t *testing.T) {
	tbl := newTestTable(t, "none", nil)
	s := snap(t, tbl)
	appendFiles(t, tbl, writeFile(t, tbl, s, 1, 0, 10))
	real := tbl.Store.(*LocalStorage).Root
	link := filepath.Join(t.TempDir(), "linked")
	require.NoError(t, os.Symlink(real, link))
	ltbl, err := OpenLocal(link)
	require.NoError(t, err)
	writeAged(t, real, time.Now().Add(-30*24*time.Hour), "part=1/orphan.parquet")
	res, err := ltbl.Vacuum(t.Context(), link, VacuumConfig{Retain: TableRetention})
	require.NoError(t, err)
	require.Len(t, res.Files, 1)
	assert.Equal(t, "part=1/orphan.parquet", res.Files[0].Path)
	assert.NoFileExists(t, filepath.Join(real, "part=1", "orphan.parquet"))
	assert.Len(t, ids(t, ltbl), 10)
}

// listTree maps every file under dir to its size, not following links.
func listTree(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	require.NoError(t, filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		out[p] = info.Size()
		return nil
	}))
	return out
}
