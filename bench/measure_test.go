package bench

import (
	"context"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/table/catalogs"
)

// newCatalog opens an embedded catalog in a fresh directory.
func newCatalog(t testing.TB) catalog.Catalog {
	t.Helper()
	cat, err := catalogs.Open(t.Context(), catalogs.Spec{Warehouse: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

// newPointTable creates an empty generated-schema table (v2 with bbox
// columns, or v3 with only a geometry column) and appends one file per
// batch of points, in order.
func newPointTable(t testing.TB, cat catalog.Catalog, name string, formatVersion int, batches ...[][2]float64) *table.Table {
	t.Helper()
	cfg := GenerateConfig{Table: name, Rows: 1, Commits: 1, FormatVersion: formatVersion}.withDefaults()
	tbl, err := createTable(t.Context(), cat, cfg)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, false, false)
	if err != nil {
		t.Fatal(err)
	}
	var id int64
	for _, pts := range batches {
		rec := pointBatch(sc, id, pts)
		id += int64(len(pts))
		rdr, err := array.NewRecordReader(sc, []arrow.RecordBatch{rec})
		if err != nil {
			t.Fatal(err)
		}
		tbl, err = tbl.Append(t.Context(), rdr, nil)
		rdr.Release()
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	return tbl
}

// pointBatch builds one record of points with ids from id on.
func pointBatch(sc *arrow.Schema, id int64, pts [][2]float64) arrow.RecordBatch {
	mem := memory.DefaultAllocator
	ids := array.NewInt64Builder(mem)
	ts := array.NewTimestampBuilder(mem, &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"})
	dev := array.NewInt32Builder(mem)
	geo := array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary)
	var bb [4]*array.Float64Builder
	for i := range bb {
		bb[i] = array.NewFloat64Builder(mem)
	}
	for i, p := range pts {
		ids.Append(id + int64(i))
		ts.Append(arrow.Timestamp(id + int64(i)))
		dev.Append(1)
		geo.Append(appendPointWKB(nil, p[0], p[1]))
		for j, v := range []float64{p[0], p[1], p[0], p[1]} {
			bb[j].Append(v)
		}
	}
	cols := []arrow.Array{ids.NewArray(), ts.NewArray(), dev.NewArray(), geoArray(sc.Field(3).Type, geo.NewArray())}
	if sc.NumFields() > 4 {
		for i := range bb {
			cols = append(cols, bb[i].NewArray())
		}
	}
	rec := array.NewRecordBatch(sc, cols, int64(len(pts)))
	for _, c := range cols {
		c.Release()
	}
	return rec
}

// fourCells is four files of two points each, on a row of disjoint cells:
// file k spans [10k+1, 10k+4] × [1, 4].
func fourCells() [][][2]float64 {
	var out [][][2]float64
	for k := range 4 {
		x := float64(10 * k)
		out = append(out, [][2]float64{{x + 1, 1}, {x + 4, 4}})
	}
	return out
}

func TestMeasureWindowsExact(t *testing.T) {
	t.Parallel()
	windows := []spatial.Bound{
		{MinX: 0, MinY: 0, MaxX: 5, MaxY: 5},           // file 0 only
		{MinX: 3, MinY: 0, MaxX: 12, MaxY: 5},          // files 0 and 1, one matching point each
		{MinX: 5, MinY: 0, MaxX: 10, MaxY: 5},          // the gap between files 0 and 1
		{MinX: -100, MinY: -100, MaxX: 100, MaxY: 100}, // everything
		{MinX: 14, MinY: 4, MaxX: 20, MaxY: 20},        // touches file 1's corner point (14, 4)
		{MinX: 0, MinY: 2, MaxX: 40, MaxY: 3},          // every file's bbox, no point
	}
	want := []WindowResult{
		{Planned: 1, Matching: 2, FilesWithMatches: 1, LowerBound: 1, RowGroupsRead: 1},
		{Planned: 2, Matching: 2, FilesWithMatches: 2, LowerBound: 1, RowGroupsRead: 2},
		{},
		{Planned: 4, Matching: 8, FilesWithMatches: 4, LowerBound: 4, RowGroupsRead: 4},
		{Planned: 1, Matching: 1, FilesWithMatches: 1, LowerBound: 1, RowGroupsRead: 1},
		// One row group a file, as wide as the file: read where the file is.
		{Planned: 4, RowGroupsRead: 4},
	}
	for _, tc := range []struct {
		name          string
		formatVersion int
		filter        string
	}{
		{"v2 bbox columns", 2, "bbox"},
		{"v3 geometry", 3, "geometry"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cat := newCatalog(t)
			tbl := newPointTable(t, cat, "t.cells", tc.formatVersion, fourCells()...)
			cols, err := columnsOf(tbl.Schema(), tbl.Properties())
			if err != nil {
				t.Fatal(err)
			}
			if got := map[bool]string{true: "bbox", false: "geometry"}[cols.HasBBox()]; got != tc.filter {
				t.Fatalf("filtering on %s, want %s", got, tc.filter)
			}
			files, err := readFiles(t.Context(), tbl, cols)
			if err != nil {
				t.Fatal(err)
			}
			if len(files) != 4 {
				t.Fatalf("%d files, want 4", len(files))
			}
			for _, f := range files {
				if !f.hasBound || f.bound.Width() != 3 || f.bound.Height() != 3 {
					t.Fatalf("file %s bound %+v (stats %v), want a 3x3 box", f.path, f.bound, f.hasBound)
				}
			}
			got, err := measureWindows(t.Context(), icebergPlanner(tbl, cols), files, windows)
			if err != nil {
				t.Fatal(err)
			}
			for i := range got {
				if got[i].PlannedBytes <= 0 && got[i].Planned > 0 {
					t.Errorf("window %d: %d files planned with %d bytes", i, got[i].Planned, got[i].PlannedBytes)
				}
				if got[i].RowGroupBytesRead > got[i].PlannedBytes || got[i].RowGroupsRead > 0 && got[i].RowGroupBytesRead <= 0 {
					t.Errorf("window %d: %d row groups of %d bytes read of %d bytes planned", i, got[i].RowGroupsRead, got[i].RowGroupBytesRead, got[i].PlannedBytes)
				}
				got[i].PlannedBytes, got[i].RowGroupBytesRead = 0, 0
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Fatalf("window results (-want +got):\n%s", d)
			}
			lr := summarize(Unsorted, files, got)
			if lr.RatioToLowerBound == nil || *lr.RatioToLowerBound != 12.0/7.0 {
				t.Fatalf("ratio %v, want 12/7", lr.RatioToLowerBound)
			}
			if lr.MaxOverlapDepth != 1 || lr.MeanOverlapDepth != 1 {
				t.Fatalf("overlap mean %g max %d, want 1 and 1 for disjoint files", lr.MeanOverlapDepth, lr.MaxOverlapDepth)
			}
		})
	}
}

func TestLowerBound(t *testing.T) {
	t.Parallel()
	// Worked by hand: 1,000 matching rows over files of at most 300 rows
	// need at least 4 files (3 hold only 900).
	for _, tc := range []struct{ matching, maxRows, want int64 }{
		{1000, 300, 4},
		{900, 300, 3},
		{901, 300, 4},
		{1, 300, 1},
		{0, 300, 0},
		{5, 0, 0},
	} {
		if got := lowerBound(tc.matching, tc.maxRows); got != tc.want {
			t.Errorf("lowerBound(%d, %d) = %d, want %d", tc.matching, tc.maxRows, got, tc.want)
		}
	}
}

func TestSummarizeLowerBound(t *testing.T) {
	t.Parallel()
	// Files of 3, 5 and 2 rows, bounds given per window.
	files := []fileInfo{
		{count: 3, rows: make([]spatial.Bound, 3), bound: everywhere},
		{count: 5, rows: make([]spatial.Bound, 5), bound: everywhere},
		{count: 2, rows: make([]spatial.Bound, 2), bound: everywhere},
	}
	per := []WindowResult{
		{Planned: 3, Matching: 7, LowerBound: 2},
		{Planned: 3, Matching: 5, LowerBound: 1},
		{Planned: 1, Matching: 0, LowerBound: 0},
	}
	lr := summarize("hilbert", files, per)
	if lr.MaxRowsPerFile != 5 || lr.Rows != 10 {
		t.Fatalf("max rows per file %d, rows %d; want 5 and 10", lr.MaxRowsPerFile, lr.Rows)
	}
	if want := 7.0 / 3.0; lr.RatioToLowerBound == nil || *lr.RatioToLowerBound != want {
		t.Fatalf("ratio %v, want %g", lr.RatioToLowerBound, want)
	}
	if lr.MedianFilesPlanned != 3 || lr.P95FilesPlanned != 3 || lr.MeanFilesPlanned != 7.0/3.0 {
		t.Fatalf("median %g p95 %g mean %g", lr.MedianFilesPlanned, lr.P95FilesPlanned, lr.MeanFilesPlanned)
	}
}

func TestLowerBoundUsesEvenShare(t *testing.T) {
	t.Parallel()
	// Files of 6 and 2 rows: an even share is 4 rows, so the 5 rows a
	// window matches need 2 files (by the largest file, 1).
	at := func(x float64) spatial.Bound { return spatial.Bound{MinX: x, MinY: x, MaxX: x, MaxY: x} }
	a := fileInfo{path: "a", count: 6, bound: everywhere}
	for i := range 6 {
		a.rows = append(a.rows, at(float64(i/5)*10))
	}
	b := fileInfo{path: "b", count: 2, rows: []spatial.Bound{at(10), at(10)}, bound: everywhere}
	all := func(context.Context, int, spatial.Bound) ([]string, error) { return []string{"a", "b"}, nil }
	per, err := measureWindows(t.Context(), all, []fileInfo{a, b}, []spatial.Bound{{MinX: -1, MinY: -1, MaxX: 1, MaxY: 1}})
	require.NoError(t, err)
	assert.Equal(t, int64(5), per[0].Matching)
	assert.Equal(t, int64(2), per[0].LowerBound)
}

func TestPercentiles(t *testing.T) {
	t.Parallel()
	v := []float64{5, 1, 4, 2, 3, 10, 6, 7, 8, 9} // 1..10
	if got := median(v); got != 5.5 {
		t.Errorf("median = %g, want 5.5", got)
	}
	if got := percentile(v, 0.95); got != 10 {
		t.Errorf("p95 = %g, want 10 (nearest rank 10 of 10)", got)
	}
	if got := percentile(v, 0.5); got != 5 {
		t.Errorf("p50 = %g, want 5", got)
	}
	if got := median(v[:3]); got != 4 { // 5, 1, 4
		t.Errorf("median of 3 = %g, want 4", got)
	}
}

func TestOverlapDepth(t *testing.T) {
	t.Parallel()
	box := func(minx, miny, maxx, maxy float64) spatial.Bound {
		return spatial.Bound{MinX: minx, MinY: miny, MaxX: maxx, MaxY: maxy}
	}
	pt := func(x, y float64) spatial.Bound { return box(x, y, x, y) }
	files := []fileInfo{
		{bound: box(0, 0, 2, 2), hasBound: true, rows: []spatial.Bound{pt(0, 0), pt(2, 2)}},
		{bound: box(1, 1, 3, 3), hasBound: true, rows: []spatial.Bound{pt(1, 1), pt(3, 3)}},
		// Touches the other two at (2, 1): closed boxes share that point.
		{bound: box(2, 0, 4, 1), hasBound: true, rows: []spatial.Bound{pt(2, 0), pt(4, 1)}},
		{bound: box(10, 10, 11, 11), hasBound: true, rows: []spatial.Bound{pt(10, 10), pt(11, 11)}},
	}
	mean, maxDepth := overlapDepth(files)
	if maxDepth != 3 {
		t.Errorf("max depth %d, want 3 (at (2,1))", maxDepth)
	}
	// Depth at each row: (0,0)1 (2,2)2 (1,1)2 (3,3)1 (2,0)2 (4,1)1 (10,10)1 (11,11)1.
	if want := 11.0 / 8.0; mean != want {
		t.Errorf("mean depth %g, want %g", mean, want)
	}
	files = append(files, fileInfo{bound: everywhere})
	if _, maxDepth := overlapDepth(files); maxDepth != 4 {
		t.Errorf("with a file without statistics: max depth %d, want 4", maxDepth)
	}
}
