package main

import (
	"io/fs"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// benchWarehouse is a generated warehouse every benchmark run starts
// from. The catalog records absolute paths, so a copy made elsewhere would
// read and write the generated files themselves: the warehouse is saved
// once and restored, byte for byte, at the path it was generated at.
type benchWarehouse struct {
	path  string // where the table was generated and every run works
	saved string // the generated warehouse as it was, never opened
}

// newBenchWarehouse generates the benchmarks' table of rows rows in
// commits commits into a fresh warehouse and saves a copy of it. A child
// process generates it: a child's maxrss starts from its parent's
// resident size at exec, so the benchmark's own process stays small.
func newBenchWarehouse(tb testing.TB, rows int64, commits int) benchWarehouse {
	tb.Helper()
	dir := tb.TempDir()
	w := benchWarehouse{path: filepath.Join(dir, "wh"), saved: filepath.Join(dir, "saved")}
	gen := childCLI(tb.Context(), "--warehouse", w.path, "--json", "generate", "--table", benchTable, "--rows", strconv.FormatInt(rows, 10),
		"--commits", strconv.Itoa(commits), "--distribution", "clustered", "--seed", strconv.Itoa(benchSeed))
	if out, err := gen.CombinedOutput(); err != nil {
		tb.Fatalf("generate: %v\n%s", err, out)
	}
	w.save(tb)
	return w
}

// save keeps the warehouse as it is now as the one every run starts from.
func (w benchWarehouse) save(tb testing.TB) {
	tb.Helper()
	restoreTree(tb, w.path, w.saved)
}

// fresh restores the saved warehouse at its own path, undoing the last
// run, and returns that path.
func (w benchWarehouse) fresh(tb testing.TB) string {
	tb.Helper()
	restoreTree(tb, w.saved, w.path)
	return w.path
}

// parquetBytes is the size of the Parquet files under dir.
func parquetBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && filepath.Ext(p) == ".parquet" {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// listFiles is every regular file under dir, relative to it, with its size.
func listFiles(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	files := map[string]int64{}
	eachFile(t, dir, func(p string, info fs.FileInfo) {
		rel, err := filepath.Rel(dir, p)
		require.NoError(t, err)
		files[rel] = info.Size()
	})
	return files
}

// eachFile calls fn with the path and information of every regular file
// under dir.
func eachFile(t *testing.T, dir string, fn func(p string, info fs.FileInfo)) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err == nil {
			fn(p, info)
		}
		return err
	}))
}

// A run on a fresh warehouse reads and writes that warehouse only, and
// the next fresh one is the generated table again, not the last run's.
func TestBenchWarehouseRunsAreIndependent(t *testing.T) {
	w := newBenchWarehouse(t, 4000, 4)
	saved := listFiles(t, w.saved)
	for run := range 2 {
		wh := w.fresh(t)
		require.Equal(t, saved, listFiles(t, wh), "run %d starts from the generated warehouse", run)
		res := runChild(t, "--warehouse", wh, "rewrite", "--table", benchTable, "--option", "rewrite-all=true")
		require.Equal(t, 0, res.Code, res.Stderr)
		after := listFiles(t, wh)
		require.Greater(t, len(after), len(saved), "run %d wrote its files into its own warehouse", run)
		require.Equal(t, saved, listFiles(t, w.saved), "run %d left the saved warehouse alone", run)
	}
}
