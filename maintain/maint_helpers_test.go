package maintain_test

import (
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/internal/testing/testenv"
	"github.com/geocompact/geocompact/table/catalogs"
)

// fragmented opens a fresh embedded catalog and generates a fragmented
// table name in it with the given number of append commits.
func fragmented(t testing.TB, name string, rows int64, commits int) catalog.Catalog {
	t.Helper()
	cat, err := catalogs.Open(t.Context(), catalogs.Spec{Warehouse: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	generate(t, cat, name, rows, commits)
	return cat
}

// fragmentedOn is fragmented on a fresh catalog of c's backend.
func fragmentedOn(t testing.TB, c testenv.Catalog, name string, rows int64, commits int) catalog.Catalog {
	t.Helper()
	cat, _ := c.Open(t)
	generate(t, cat, name, rows, commits)
	return cat
}

func generate(t testing.TB, cat catalog.Catalog, name string, rows int64, commits int) {
	t.Helper()
	if _, err := bench.Generate(t.Context(), cat, bench.GenerateConfig{Table: name, Rows: rows, Commits: commits, Seed: 1}); err != nil {
		t.Fatal(err)
	}
}

func load(t testing.TB, cat catalog.Catalog, name string) *table.Table {
	t.Helper()
	tbl, err := catalogs.LoadTable(t.Context(), cat, name)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// tableDir is the local directory of the table's location.
func tableDir(t testing.TB, tbl *table.Table) string {
	t.Helper()
	u, err := url.Parse(tbl.Location())
	if err != nil {
		t.Fatal(err)
	}
	return u.Path
}

// listFiles maps every file under dir to its size.
func listFiles(t testing.TB, dir string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		st, err := d.Info()
		if err != nil {
			return err
		}
		out[p] = st.Size()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// liveRows sums the record counts of the current snapshot's data files
// (the generated tables have no deletes).
func liveRows(t testing.TB, tbl *table.Table) (rows int64, files int) {
	t.Helper()
	tasks, err := tbl.Scan().PlanFiles(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		rows += task.File.Count()
	}
	return rows, len(tasks)
}

func snapshotIDs(tbl *table.Table) []int64 {
	var ids []int64
	for _, s := range tbl.Metadata().Snapshots() {
		ids = append(ids, s.SnapshotID)
	}
	return ids
}

// binpackAll rewrites every data file of an unpartitioned table into one
// with iceberg-go's own compaction, leaving a replace snapshot whose
// predecessors reference the replaced files.
func binpackAll(t testing.TB, cat catalog.Catalog, name string) (replaced map[string]int64) {
	t.Helper()
	tbl := load(t, cat, name)
	tasks, err := tbl.Scan().PlanFiles(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	replaced = map[string]int64{}
	var total int64
	for _, task := range tasks {
		replaced[filepath.Clean(trimFileScheme(task.File.FilePath()))] = task.File.FileSizeBytes()
		total += task.File.FileSizeBytes()
	}
	g := table.CompactionTaskGroup{Tasks: tasks, TotalSizeBytes: total}
	if _, err := tbl.RewriteDataFiles(t.Context(), []table.CompactionTaskGroup{g}, table.RewriteDataFilesOptions{}); err != nil {
		t.Fatal(err)
	}
	return replaced
}

func trimFileScheme(p string) string {
	if u, err := url.Parse(p); err == nil && u.Scheme == "file" {
		return u.Path
	}
	return p
}

// plant writes an unreferenced file of n bytes at path with the given age.
func plant(t testing.TB, path string, n int, age time.Duration) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, make([]byte, n), 0o644); err != nil {
		t.Fatal(err)
	}
	ts := time.Now().Add(-age)
	if err := os.Chtimes(path, ts, ts); err != nil {
		t.Fatal(err)
	}
}

// ageAllFiles sets the mtime of every file under dir back by age, so that
// files the test just wrote count as old.
func ageAllFiles(t testing.TB, dir string, age time.Duration) {
	t.Helper()
	ts := time.Now().Add(-age)
	for p := range listFiles(t, dir) {
		if err := os.Chtimes(p, ts, ts); err != nil {
			t.Fatal(err)
		}
	}
}
