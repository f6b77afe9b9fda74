package engine_test

import (
	"cmp"
	"fmt"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/cluster"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/internal/testing/enginetest"
	"github.com/geocompact/geocompact/internal/testing/testenv"
	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/spatial/icebergspatial"
	format "github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/catalogs"
)

// sortedWithin reports whether column col of every file is non-decreasing
// and the files' ranges do not overlap.
func checkLinearOrder(t *testing.T, tbl *table.Table) {
	t.Helper()
	files := tableFiles(t, tbl)
	type span struct{ lo, hi float64 }
	var spans []span
	for _, f := range files {
		_, recs, err := tbl.Scan().ReadTasks(t.Context(), []table.FileScanTask{f})
		if err != nil {
			t.Fatal(err)
		}
		var vals []float64
		for rec, err := range recs {
			if err != nil {
				t.Fatal(err)
			}
			col := rec.Column(rec.Schema().FieldIndices("bbox_minx")[0]).(*array.Float64)
			vals = append(vals, col.Float64Values()...)
			rec.Release()
		}
		if !slices.IsSorted(vals) {
			t.Fatalf("file %s is not sorted by bbox_minx", f.File.FilePath())
		}
		spans = append(spans, span{vals[0], vals[len(vals)-1]})
	}
	slices.SortFunc(spans, func(a, b span) int { return cmpFloat(a.lo, b.lo) })
	for i := 1; i < len(spans); i++ {
		if spans[i].lo < spans[i-1].hi {
			t.Fatalf("files overlap in bbox_minx: %v and %v", spans[i-1], spans[i])
		}
	}
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func TestRewriteSortOrders(t *testing.T) {
	t.Parallel()
	eachCatalog(t, func(t *testing.T, c testenv.Catalog) {
		for _, curve := range []string{"linear", "zorder", "hilbert"} {
			t.Run(curve, func(t *testing.T) {
				cat, name := newTable(t, c, bench.GenerateConfig{Rows: 20000, Commits: 10, Distribution: bench.Clustered})
				tbl := mustLoad(t, cat, name)
				var total int64
				for _, f := range tableFiles(t, tbl) {
					total += f.File.FileSizeBytes()
				}
				before := tableDigest(t, tbl)
				res := rewrite(t, cat, name, engine.Request{Curve: curve, Options: opts("target-file-size-bytes", fmt.Sprint(total/8), "rewrite-all", "true")})
				if res.AddedDataFilesCount < 6 {
					t.Fatalf("added %d files, want about 8", res.AddedDataFilesCount)
				}
				tbl = mustLoad(t, cat, name)
				checkUnchanged(t, before, tbl)
				if got := tbl.CurrentSnapshot().Summary.Properties[format.SummarySortOrder]; got == "" {
					t.Fatal("snapshot summary lacks the sort order")
				}
				if curve == "linear" {
					checkLinearOrder(t, tbl)
				} else {
					checkCurveOrder(t, tbl, curve, before.Extent)
				}
				// Clustering shrinks the files' bboxes: their mean area must be
				// well below the whole extent's, which arrival order covers.
				checkCompactBoxes(t, tbl)
			})
		}
	})
}

// checkCompactBoxes asserts that the mean file bbox covers under a quarter
// of the table extent.
func checkCompactBoxes(t *testing.T, tbl *table.Table) {
	t.Helper()
	cols, err := icebergspatial.Columns(tbl.Schema(), tbl.Properties(), "")
	require.NoError(t, err)
	var sum float64
	files := tableFiles(t, tbl)
	for _, f := range files {
		b, ok := icebergspatial.FileBound(tbl.Schema(), cols, f.File.LowerBoundValues(), f.File.UpperBoundValues())
		require.True(t, ok, "file %s has no bbox statistics", f.File.FilePath())
		sum += (b.MaxX - b.MinX) * (b.MaxY - b.MinY)
	}
	mean := sum / float64(len(files))
	assert.LessOrEqual(t, mean, 0.25*360*180, "mean file bbox area is not much below the extent's")
}

// checkCurveOrder asserts that the rows of every file are in curve-key
// order, and that the files' key ranges do not overlap: the order is
// global across the group, not per batch or per file.
func checkCurveOrder(t *testing.T, tbl *table.Table, curve string, extent spatial.Bound) {
	t.Helper()
	order, err := cluster.CurveOrder(curve)
	if err != nil {
		t.Fatal(err)
	}
	type span struct{ lo, hi uint64 }
	var spans []span
	for _, f := range tableFiles(t, tbl) {
		sc, recs, err := tbl.Scan().ReadTasks(t.Context(), []table.FileScanTask{f})
		if err != nil {
			t.Fatal(err)
		}
		sorter, err := cluster.NewSorter(order, sc, cluster.SortOptions{Extent: extent})
		if err != nil {
			t.Fatal(err)
		}
		var keys []uint64
		for rec, err := range recs {
			if err != nil {
				t.Fatal(err)
			}
			k, err := sorter.Keys(rec)
			if err != nil {
				t.Fatal(err)
			}
			keys = append(keys, k...)
			rec.Release()
		}
		if !slices.IsSorted(keys) {
			t.Fatalf("file %s is not in %s order", f.File.FilePath(), curve)
		}
		spans = append(spans, span{keys[0], keys[len(keys)-1]})
	}
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.lo, b.lo) })
	for i := 1; i < len(spans); i++ {
		if spans[i].lo < spans[i-1].hi {
			t.Fatalf("files overlap in %s key: %v and %v", curve, spans[i-1], spans[i])
		}
	}
}

func TestRewriteSortUsesTableSortOrder(t *testing.T) {
	t.Parallel()
	cat, err := catalogs.Open(t.Context(), catalogs.Spec{Warehouse: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if err := cat.CreateNamespace(t.Context(), table.Identifier{"geo"}, nil); err != nil {
		t.Fatal(err)
	}
	sc := bench.Schema(2, true, "OGC:CRS84")
	so, err := table.NewSortOrder(1, []table.SortField{{SourceIDs: []int{1}, Transform: iceberg.IdentityTransform{}, Direction: table.SortDESC, NullOrder: table.NullsLast}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cat.CreateTable(t.Context(), table.Identifier{"geo", "s"}, sc, catalog.WithSortOrder(so)); err != nil {
		t.Fatal(err)
	}
	src, name := newTable(t, testenv.Catalog{Backend: testenv.SQLite}, bench.GenerateConfig{Rows: 600, Commits: 6})
	srcTbl := mustLoad(t, src, name)
	dst := mustLoad(t, cat, "geo.s")
	for _, task := range tableFiles(t, srcTbl) {
		_, recs, err := srcTbl.Scan().ReadTasks(t.Context(), []table.FileScanTask{task})
		if err != nil {
			t.Fatal(err)
		}
		for rec, err := range recs {
			if err != nil {
				t.Fatal(err)
			}
			rdr, _ := array.NewRecordReader(rec.Schema(), []arrow.RecordBatch{rec})
			if dst, err = dst.Append(t.Context(), rdr, nil); err != nil {
				t.Fatal(err)
			}
			rdr.Release()
		}
	}
	res := rewrite(t, cat, "geo.s", engine.Request{Strategy: engine.Sort})
	if res.SortOrder != `id DESC NULLS LAST` || res.AddedDataFilesCount != 1 {
		t.Fatalf("sort order %q, %d files", res.SortOrder, res.AddedDataFilesCount)
	}
	_, recs, err := mustLoad(t, cat, "geo.s").Scan().ToArrowRecords(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for rec, err := range recs {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, rec.Column(0).(*array.Int64).Int64Values()...)
		rec.Release()
	}
	if len(ids) != 600 || !slices.IsSortedFunc(ids, func(a, b int64) int { return cmp.Compare(b, a) }) {
		t.Fatalf("%d rows, not in id DESC order", len(ids))
	}
}

// TestRewriteCurveWithoutGeometryNamesTheWayOut checks that a curve
// rewrite of a table with neither bbox columns nor a geometry column
// geocompact can find (a WKB column another engine wrote, without
// GeoParquet metadata) is refused with the table property that names the
// column, and commits nothing.
func TestRewriteCurveWithoutGeometryNamesTheWayOut(t *testing.T) {
	t.Parallel()
	cat, err := catalogs.Open(t.Context(), catalogs.Spec{Warehouse: t.TempDir()})
	require.NoError(t, err)
	require.NoError(t, cat.CreateNamespace(t.Context(), table.Identifier{"geo"}, nil))
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "wkb", Type: iceberg.PrimitiveTypes.Binary})
	tbl, err := cat.CreateTable(t.Context(), table.Identifier{"geo", "bare"}, sc)
	require.NoError(t, err)
	asc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "wkb", Type: arrow.BinaryTypes.Binary, Nullable: true}}, nil)
	for i := range 3 {
		b := array.NewRecordBuilder(memory.DefaultAllocator, asc)
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.BinaryBuilder).Append([]byte{1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
		rec := b.NewRecordBatch()
		rdr, _ := array.NewRecordReader(asc, []arrow.RecordBatch{rec})
		tbl, err = tbl.Append(t.Context(), rdr, nil)
		require.NoError(t, err)
		rdr.Release()
		rec.Release()
		b.Release()
	}
	snap := tbl.CurrentSnapshot().SnapshotID
	_, err = enginetest.Rewrite(t.Context(), cat, "geo.bare", engine.Request{Curve: "hilbert", Options: opts("rewrite-all", "true")})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `no column "bbox_minx"`)
	assert.Contains(t, err.Error(), spatial.PropGeometryColumn)
	assert.Equal(t, snap, mustLoad(t, cat, "geo.bare").CurrentSnapshot().SnapshotID)
}
