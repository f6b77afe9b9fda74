// Package icebergtest makes generated Iceberg tables for the tests of the
// rewrite and its jobs, and reads them back: their files, their rows as a
// digest, the files under their folders.
//
// It imports bench, so bench's own (internal) tests cannot use it.
package icebergtest

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/engine/verify"
	"github.com/geocompact/geocompact/internal/testing/enginetest"
	"github.com/geocompact/geocompact/internal/testing/testenv"
	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/table/catalogs"
)

// SpillBudget, as max-group-memory-bytes, sends every group of the test
// tables through the spilled sort: it is far below any group's in-memory
// estimate.
const SpillBudget = "1048576"

// SQLite returns the SQLite test catalog, for tests whose subject does not
// depend on the catalog.
func SQLite(t testing.TB) testenv.Catalog {
	t.Helper()
	for _, c := range testenv.Catalogs(t) {
		if c.Backend == testenv.SQLite {
			return c
		}
	}
	t.Fatal("no sqlite catalog")
	return testenv.Catalog{}
}

// NewTable generates a table in a fresh catalog of c's backend, called
// geo.t and drawn with seed 7 unless cfg says otherwise.
func NewTable(t testing.TB, c testenv.Catalog, cfg bench.GenerateConfig) (catalog.Catalog, string) {
	t.Helper()
	cat, _ := c.Open(t)
	if cfg.Table == "" {
		cfg.Table = "geo.t"
	}
	if cfg.Seed == 0 {
		cfg.Seed = 7
	}
	_, err := bench.Generate(t.Context(), cat, cfg)
	require.NoError(t, err)
	return cat, cfg.Table
}

// TwinTables generates the same table in two SQLite catalogs, each then
// given to prepare when it is set.
func TwinTables(t testing.TB, cfg bench.GenerateConfig, prepare func(*table.Table)) (a, b catalog.Catalog, name string) {
	t.Helper()
	c := SQLite(t)
	a, name = NewTable(t, c, cfg)
	b, _ = NewTable(t, c, cfg)
	if prepare != nil {
		prepare(Load(t, a, name))
		prepare(Load(t, b, name))
	}
	return a, b, name
}

// Load loads the table called name from cat.
func Load(t testing.TB, cat catalog.Catalog, name string) *table.Table {
	t.Helper()
	tbl, err := catalogs.LoadTable(t.Context(), cat, name)
	require.NoError(t, err)
	return tbl
}

// Files lists the live data files of the current snapshot.
func Files(t testing.TB, tbl *table.Table) []table.FileScanTask {
	t.Helper()
	tasks, err := tbl.Scan().PlanFiles(t.Context())
	require.NoError(t, err)
	return tasks
}

// Digest reads every row of the table (deletes applied).
func Digest(t testing.TB, tbl *table.Table) verify.Digest {
	t.Helper()
	d := verify.NewDigest()
	sc, recs, err := tbl.Scan().ToArrowRecords(t.Context())
	require.NoError(t, err)
	geom, bbox := -1, [4]int{-1, -1, -1, -1}
	for i, n := range []string{"bbox_minx", "bbox_miny", "bbox_maxx", "bbox_maxy"} {
		if idx := sc.FieldIndices(n); len(idx) > 0 {
			bbox[i] = idx[0]
		}
	}
	if idx := sc.FieldIndices("geometry"); len(idx) > 0 {
		geom = idx[0]
	}
	for rec, err := range recs {
		require.NoError(t, err)
		require.NoError(t, d.Add(rec, geom, bbox))
		rec.Release()
	}
	return d
}

// CheckUnchanged fails t unless tbl holds the rows of before and its
// current snapshot is a replace.
func CheckUnchanged(t testing.TB, before verify.Digest, tbl *table.Table) {
	t.Helper()
	if d := before.Diff(Digest(t, tbl)); d != "" {
		t.Fatalf("data changed: %s", d)
	}
	if op := tbl.CurrentSnapshot().Summary.Operation; op != table.OpReplace {
		t.Fatalf("snapshot operation %q, want replace", op)
	}
}

// FileRows reads each data file of the table on its own and returns the
// id sequence of each, keyed by its first id: two rewrites wrote the same
// files in the same order exactly when these maps are equal.
func FileRows(t testing.TB, tbl *table.Table) map[int64][]int64 {
	t.Helper()
	out := map[int64][]int64{}
	for _, task := range Files(t, tbl) {
		_, recs, err := tbl.Scan().ReadTasks(t.Context(), []table.FileScanTask{task})
		require.NoError(t, err)
		var ids []int64
		for rec, err := range recs {
			require.NoError(t, err)
			col := rec.Column(rec.Schema().FieldIndices("id")[0]).(*array.Int64)
			ids = append(ids, col.Int64Values()...)
			rec.Release()
		}
		require.NotEmpty(t, ids)
		out[ids[0]] = ids
	}
	return out
}

// FileBoxes reads each data file of tbl on its own and returns the box of
// its rows.
func FileBoxes(t testing.TB, tbl *table.Table) []spatial.Bound {
	t.Helper()
	var out []spatial.Bound
	for _, task := range Files(t, tbl) {
		_, recs, err := tbl.Scan().ReadTasks(t.Context(), []table.FileScanTask{task})
		require.NoError(t, err)
		box := spatial.EmptyBound()
		for rec, err := range recs {
			require.NoError(t, err)
			geom, bbox := verify.Columns(rec.Schema(), "geometry")
			box = box.Extend(verify.Extent(rec, geom, bbox))
			rec.Release()
		}
		out = append(out, box)
	}
	return out
}

// AssertTiled checks that no two boxes overlap (touching is fine).
func AssertTiled(t testing.TB, boxes []spatial.Bound) {
	t.Helper()
	for i := range boxes {
		for j := range i {
			a, b := boxes[i], boxes[j]
			overlap := max(a.MinX, b.MinX) < min(a.MaxX, b.MaxX) && max(a.MinY, b.MinY) < min(a.MaxY, b.MaxY)
			assert.False(t, overlap, "files %d %v and %d %v overlap", i, a, j, b)
		}
	}
}

// DirFiles lists the files below dir, sorted.
func DirFiles(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return err
	})
	require.NoError(t, err)
	slices.Sort(out)
	return out
}

// Opts makes an options map of key, value pairs.
func Opts(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// Rewrite rewrites the table called name in cat and fails t on an error.
func Rewrite(t testing.TB, cat catalog.Catalog, name string, req engine.Request) *engine.Result {
	t.Helper()
	res, err := enginetest.Rewrite(t.Context(), cat, name, req)
	require.NoError(t, err, "rewrite")
	return res
}
