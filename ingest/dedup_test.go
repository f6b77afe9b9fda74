package ingest_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/ingest"
	format "github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/catalogs"
)

func openWarehouse(t *testing.T) catalog.Catalog {
	t.Helper()
	cat, err := catalogs.Open(t.Context(), catalogs.Spec{Warehouse: t.TempDir()})
	require.NoError(t, err)
	return cat
}

// copyFile copies src to dir/name and returns the copy's path.
func copyFile(t *testing.T, src, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	require.NoError(t, err)
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, b, 0o644))
	return p
}

func tableRows(t *testing.T, cat catalog.Catalog, name string) int64 {
	t.Helper()
	tbl, err := catalogs.LoadTable(t.Context(), cat, name)
	require.NoError(t, err)
	tasks, err := tbl.Scan().PlanFiles(t.Context())
	require.NoError(t, err)
	var n int64
	for _, task := range tasks {
		n += task.File.Count()
	}
	return n
}

func TestRunSkipsIngestedFile(t *testing.T) {
	cat := openWarehouse(t)
	p := pointsFile(t, 5)
	first, err := runIceberg(t.Context(), cat, config("gis.d", p))
	require.NoError(t, err)
	retry := copyFile(t, p, t.TempDir(), "retry.parquet")
	res, err := runIceberg(t.Context(), cat, config("gis.d", retry))
	require.NoError(t, err)
	assert.Equal(t, 0, res.Files)
	require.Len(t, res.Skipped, 1)
	assert.Equal(t, retry, res.Skipped[0].Path)
	assert.Equal(t, "pts.parquet", res.Skipped[0].Previous)
	require.NotNil(t, res.Skipped[0].Commit)
	assert.Equal(t, first.Commit, *res.Skipped[0].Commit)
	assert.Equal(t, first.Commit, res.Commit, "no new snapshot")
	assert.Equal(t, int64(5), tableRows(t, cat, "gis.d"))

	cfg := config("gis.d", retry)
	cfg.AllowDuplicates = true
	res, err = runIceberg(t.Context(), cat, cfg)
	require.NoError(t, err)
	assert.Empty(t, res.Skipped)
	assert.Equal(t, int64(10), tableRows(t, cat, "gis.d"), "--allow-duplicates appends again")
}

func TestRunSkipsDuplicateInBatch(t *testing.T) {
	cat := openWarehouse(t)
	p := pointsFile(t, 5)
	twin := copyFile(t, p, t.TempDir(), "twin.parquet")
	res, err := runIceberg(t.Context(), cat, config("gis.b", p, pointsFile(t, 3), twin))
	require.NoError(t, err)
	assert.Equal(t, 2, res.Files)
	require.Len(t, res.Skipped, 1)
	assert.Equal(t, ingest.Skipped{Source: format.Source{Path: twin, Digest: res.Skipped[0].Digest}, Previous: p}, res.Skipped[0])
	assert.Equal(t, int64(8), tableRows(t, cat, "gis.b"))
}

// TestRunConcurrentSameFile races ingests of one file: the loser's commit
// finds the winner's in the fresh history and lands nothing.
func TestRunConcurrentSameFile(t *testing.T) {
	cat := openWarehouse(t)
	_, err := runIceberg(t.Context(), cat, config("gis.c", pointsFile(t, 2)))
	require.NoError(t, err)
	p := pointsFile(t, 7)
	const writers = 4
	results := make([]*ingest.Result, writers)
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() { results[i], errs[i] = runIceberg(t.Context(), cat, config("gis.c", p)) })
	}
	wg.Wait()
	landed := 0
	for i := range writers {
		require.NoError(t, errs[i], "writer %d", i)
		landed += results[i].Files
	}
	assert.Equal(t, 1, landed, "exactly one writer lands the file")
	assert.Equal(t, int64(2+7), tableRows(t, cat, "gis.c"))
	tbl, err := catalogs.LoadTable(t.Context(), cat, "gis.c")
	require.NoError(t, err)
	assert.Len(t, dataFiles(t, tbl), 2, "losers leave no data files behind")
}

func TestExpandFiles(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
	for _, n := range []string{"b.parquet", "a.parquet", "notes.txt", "sub/c.parquet"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), nil, 0o644))
	}
	got, err := ingest.ExpandFiles([]string{dir, "x.parquet"}, false)
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(dir, "a.parquet"), filepath.Join(dir, "b.parquet"), "x.parquet"}, got)
	got, err = ingest.ExpandFiles([]string{dir}, true)
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(dir, "a.parquet"), filepath.Join(dir, "b.parquet"), filepath.Join(dir, "sub", "c.parquet")}, got)
	_, err = ingest.ExpandFiles([]string{filepath.Join(dir, "sub", "..", "sub")}, false)
	require.NoError(t, err)
	empty := t.TempDir()
	_, err = ingest.ExpandFiles([]string{empty}, false)
	assert.ErrorIs(t, err, ingest.ErrConfig)
}

// TestRunNameCannotForgeHistory ingests a file whose name holds a newline
// and the digest and name of another file, as the old line-per-file
// history would have read it; the other file must still be ingested.
func TestRunNameCannotForgeHistory(t *testing.T) {
	cat := openWarehouse(t)
	a3 := pointsFile(t, 5)
	b, err := os.ReadFile(a3)
	require.NoError(t, err)
	sum := sha256.Sum256(b)
	forged := copyFile(t, pointsFile(t, 3), t.TempDir(), "x\n"+hex.EncodeToString(sum[:])+" a3.parquet")
	first, err := runIceberg(t.Context(), cat, config("gis.f", forged))
	require.NoError(t, err)
	require.Equal(t, 1, first.Files)

	res, err := runIceberg(t.Context(), cat, config("gis.f", a3))
	require.NoError(t, err)
	assert.Empty(t, res.Skipped, "a name must not record another file as ingested")
	assert.Equal(t, 1, res.Files)
	assert.Equal(t, int64(8), tableRows(t, cat, "gis.f"))

	again, err := runIceberg(t.Context(), cat, config("gis.f", forged))
	require.NoError(t, err)
	require.Len(t, again.Skipped, 1, "the odd name's own content is recognised")
	assert.Equal(t, filepath.Base(forged), again.Skipped[0].Previous)
}
