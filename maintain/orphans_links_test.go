package maintain_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/maintain"
	"github.com/geocompact/geocompact/table/catalogs"
)

// forced lists every unreferenced file, however young: the links the
// tests make are as new as the run.
var forced = maintain.OrphansConfig{OlderThan: 0, Force: true}

// TestRemoveOrphansKeepsLinkedDirectory moves the table's data directory
// elsewhere and links it back in place: the link is the table's data, not
// an orphan, and nothing is deleted through it.
func TestRemoveOrphansKeepsLinkedDirectory(t *testing.T) {
	t.Parallel()
	const name = "t.x"
	cat := fragmented(t, name, 500, 3)
	dir := tableDir(t, load(t, cat, name))
	rows, _ := liveRows(t, load(t, cat, name))
	moved := filepath.Join(t.TempDir(), "data")
	require.NoError(t, os.Rename(filepath.Join(dir, "data"), moved))
	require.NoError(t, os.Symlink(moved, filepath.Join(dir, "data")))
	// An unreferenced file in the linked directory is outside the table
	// as the file system sees it: not listed, not deleted.
	plant(t, filepath.Join(moved, "stray.parquet"), 10, 10*24*time.Hour)
	movedBefore := listFiles(t, moved)

	// Listing the link itself as the location would follow it out.
	narrowed := forced
	narrowed.Location = filepath.Join(dir, "data")
	_, err := maintain.RemoveOrphans(t.Context(), cat, name, narrowed)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "outside the table location")

	res, err := maintain.RemoveOrphans(t.Context(), cat, name, forced)
	require.NoError(t, err)
	assert.Empty(t, res.Files)
	require.Len(t, res.Kept, 1)
	assert.Equal(t, filepath.Join(dir, "data"), trimFileScheme(res.Kept[0].Path))
	assert.Equal(t, maintain.KeepLinkToDirectory, res.Kept[0].Reason)
	assert.Equal(t, 1, res.KeptFilesCount)

	st, err := os.Lstat(filepath.Join(dir, "data"))
	require.NoError(t, err, "the link to the data directory was removed")
	assert.NotZero(t, st.Mode()&os.ModeSymlink)
	assert.Equal(t, movedBefore, listFiles(t, moved))
	got, _ := liveRows(t, load(t, cat, name))
	assert.Equal(t, rows, got)
}

// TestRemoveOrphansLinks crosses the kinds of link an orphan scan meets: a
// link to a directory outside the table and a dangling link are kept and
// reported; an unreferenced link to a file goes, and its target stays.
func TestRemoveOrphansLinks(t *testing.T) {
	t.Parallel()
	const name = "t.x"
	cat := fragmented(t, name, 500, 3)
	dir := tableDir(t, load(t, cat, name))
	out := t.TempDir()
	target := filepath.Join(out, "target.parquet")
	plant(t, target, 77, 10*24*time.Hour)
	plant(t, filepath.Join(out, "sub", "deep.parquet"), 5, 10*24*time.Hour)
	links := map[string]string{
		filepath.Join(dir, "data", "to-dir"):           filepath.Join(out, "sub"),
		filepath.Join(dir, "data", "dangling.parquet"): filepath.Join(out, "missing.parquet"),
		filepath.Join(dir, "data", "to-file.parquet"):  target,
	}
	for l, to := range links {
		require.NoError(t, os.Symlink(to, l))
	}
	outBefore := listFiles(t, out)
	for _, dry := range []bool{true, false} {
		cfg := forced
		cfg.DryRun = dry
		res, err := maintain.RemoveOrphans(t.Context(), cat, name, cfg)
		require.NoError(t, err)
		kept := map[string]string{}
		for _, k := range res.Kept {
			kept[trimFileScheme(k.Path)] = k.Reason
		}
		assert.Equal(t, map[string]string{
			filepath.Join(dir, "data", "to-dir"):           maintain.KeepLinkToDirectory,
			filepath.Join(dir, "data", "dangling.parquet"): maintain.KeepDanglingLink,
		}, kept, "dry run %v", dry)
		require.Len(t, res.Files, 1, "dry run %v", dry)
		assert.Equal(t, filepath.Join(dir, "data", "to-file.parquet"), trimFileScheme(res.Files[0].Path))
	}
	for l := range links {
		_, err := os.Lstat(l)
		if filepath.Base(l) == "to-file.parquet" {
			assert.ErrorIs(t, err, os.ErrNotExist, "the unreferenced link to a file was kept")
			continue
		}
		assert.NoError(t, err, "link %s was removed", l)
	}
	assert.Equal(t, outBefore, listFiles(t, out), "files outside the table changed")
}

// TestRemoveOrphansLinkedLocation runs orphans on a table whose directory
// is a link to where it lives, and on one whose warehouse is reached
// through a link: both work, and remove the orphan only.
func TestRemoveOrphansLinkedLocation(t *testing.T) {
	t.Parallel()
	t.Run("table directory is a link", func(t *testing.T) {
		const name = "t.x"
		cat := fragmented(t, name, 500, 3)
		dir := tableDir(t, load(t, cat, name))
		real := filepath.Join(t.TempDir(), "x")
		require.NoError(t, os.Rename(dir, real))
		require.NoError(t, os.Symlink(real, dir))
		checkOrphansRemoveOne(t, cat, name, filepath.Join(real, "data", "orphan.parquet"))
	})
	t.Run("warehouse reached through a link", func(t *testing.T) {
		const name = "t.x"
		link := filepath.Join(t.TempDir(), "wh")
		require.NoError(t, os.Symlink(t.TempDir(), link))
		cat, err := catalogs.Open(t.Context(), catalogs.Spec{Warehouse: link})
		require.NoError(t, err)
		generate(t, cat, name, 500, 3)
		dir := tableDir(t, load(t, cat, name))
		checkOrphansRemoveOne(t, cat, name, filepath.Join(dir, "data", "orphan.parquet"))
	})
}

// checkOrphansRemoveOne plants an old orphan and checks that orphans
// removes it and nothing else.
func checkOrphansRemoveOne(t *testing.T, cat catalog.Catalog, name, orphan string) {
	t.Helper()
	tbl := load(t, cat, name)
	rows, _ := liveRows(t, tbl)
	dir, err := filepath.EvalSymlinks(tableDir(t, tbl))
	require.NoError(t, err)
	ageAllFiles(t, dir, 10*24*time.Hour)
	plant(t, orphan, 10, 10*24*time.Hour)
	before := listFiles(t, dir)
	res, err := maintain.RemoveOrphans(t.Context(), cat, name, maintain.DefaultOrphansConfig())
	require.NoError(t, err)
	require.Len(t, res.Files, 1)
	assert.Equal(t, filepath.Base(orphan), filepath.Base(res.Files[0].Path))
	assert.NoFileExists(t, orphan)
	resolved, err := filepath.EvalSymlinks(filepath.Dir(orphan))
	require.NoError(t, err)
	delete(before, filepath.Join(resolved, filepath.Base(orphan)))
	assert.Equal(t, before, listFiles(t, dir))
	got, _ := liveRows(t, load(t, cat, name))
	assert.Equal(t, rows, got)
}
