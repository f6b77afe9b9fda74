package geowrite_test

import (
	"encoding/binary"
	"iter"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/internal/testing/testenv"
	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/spatial/geoparquettest"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/table/geowrite"
)

// point is one row: its id and its point geometry.
type point struct {
	id   int64
	x, y float64
}

var points = []point{{1, 0, 0}, {2, 10, -5}, {3, 3, 4}, {4, -20, 7.5}, {5, 1, 1}, {6, 2, 2}, {7, -1, 3}}

// newTable creates geo.t in a fresh SQLite catalog: an id, a WKB
// geometry (a binary column on v2, a geometry field on v3) and the four
// bbox columns.
func newTable(t testing.TB, formatVersion int) *table.Table {
	t.Helper()
	ctx := t.Context()
	cat := testenv.OpenSpec(t, catalogs.Spec{Warehouse: t.TempDir()})
	var geom iceberg.Type = iceberg.PrimitiveTypes.Binary
	if formatVersion >= 3 {
		geom = iceberg.GeometryType{}
	}
	fields := []iceberg.NestedField{
		{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		{ID: 2, Name: "geometry", Type: geom},
	}
	for i, n := range spatial.BBoxColumns {
		fields = append(fields, iceberg.NestedField{ID: 3 + i, Name: n, Type: iceberg.PrimitiveTypes.Float64})
	}
	require.NoError(t, cat.CreateNamespace(ctx, table.Identifier{"geo"}, nil))
	props := iceberg.Properties{table.PropertyFormatVersion: strconv.Itoa(formatVersion)}
	if formatVersion < 3 {
		props[spatial.PropGeometryColumn] = "geometry"
	}
	tbl, err := cat.CreateTable(ctx, table.Identifier{"geo", "t"}, iceberg.NewSchema(0, fields...), catalog.WithProperties(props))
	require.NoError(t, err)
	return tbl
}

// pointWKB is the little-endian WKB of POINT(x y).
func pointWKB(x, y float64) []byte {
	b := []byte{1}                             // little endian
	b = binary.LittleEndian.AppendUint32(b, 1) // Point
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(y))
}

// batch builds the rows as a batch of Arrow schema sc (tbl's): the WKB
// goes in as binary storage, wrapped in the geometry field's extension
// type on v3.
func batch(t testing.TB, sc *arrow.Schema, rows []point) arrow.RecordBatch {
	t.Helper()
	return batchFrom(t, memory.DefaultAllocator, sc, rows)
}

// batchFrom is batch with its buffers allocated from mem.
func batchFrom(t testing.TB, mem memory.Allocator, sc *arrow.Schema, rows []point) arrow.RecordBatch {
	t.Helper()
	ids := array.NewInt64Builder(mem)
	geom := array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary)
	var bbox [4]*array.Float64Builder
	for i := range bbox {
		bbox[i] = array.NewFloat64Builder(mem)
	}
	for _, p := range rows {
		ids.Append(p.id)
		geom.Append(pointWKB(p.x, p.y))
		for i, v := range []float64{p.x, p.y, p.x, p.y} {
			bbox[i].Append(v)
		}
	}
	g := geom.NewArray()
	if et, ok := sc.Field(1).Type.(arrow.ExtensionType); ok {
		storage := g
		g = array.NewExtensionArrayWithStorage(et, storage)
		storage.Release()
	}
	cols := []arrow.Array{ids.NewArray(), g}
	for _, b := range bbox {
		cols = append(cols, b.NewArray())
	}
	rec := array.NewRecordBatch(sc, cols, int64(len(rows)))
	for _, c := range cols {
		c.Release()
	}
	return rec
}

func arrowSchema(t testing.TB, tbl *table.Table) *arrow.Schema {
	t.Helper()
	sc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, false, false)
	require.NoError(t, err)
	return sc
}

// readBack reads the ids, WKB and bbox columns of the Parquet file at
// path, checking the bbox columns are doubles.
func readBack(t testing.TB, path string) []point {
	t.Helper()
	pf, err := file.OpenParquetFile(strings.TrimPrefix(path, "file://"), false)
	require.NoError(t, err)
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	require.NoError(t, err)
	tab, err := fr.ReadTable(t.Context())
	require.NoError(t, err)
	defer tab.Release()
	sc := tab.Schema()
	for _, n := range spatial.BBoxColumns {
		idx := sc.FieldIndices(n)
		require.Len(t, idx, 1, "the file has the column %s", n)
		assert.Equal(t, arrow.PrimitiveTypes.Float64, sc.Field(idx[0]).Type, n)
	}
	tr := array.NewTableReader(tab, -1)
	defer tr.Release()
	var out []point
	for tr.Next() {
		rec := tr.RecordBatch()
		ids := rec.Column(sc.FieldIndices("id")[0]).(*array.Int64)
		geom := rec.Column(sc.FieldIndices("geometry")[0])
		if e, ok := geom.(array.ExtensionArray); ok {
			geom = e.Storage()
		}
		minx := rec.Column(sc.FieldIndices("bbox_minx")[0]).(*array.Float64)
		maxy := rec.Column(sc.FieldIndices("bbox_maxy")[0]).(*array.Float64)
		for i := range int(rec.NumRows()) {
			p := point{ids.Value(i), minx.Value(i), maxy.Value(i)}
			assert.Equal(t, pointWKB(p.x, p.y), geom.(*array.Binary).Value(i), "row %d's geometry", p.id)
			out = append(out, p)
		}
	}
	return out
}

func fileSize(t testing.TB, path string) int64 {
	t.Helper()
	st, err := os.Stat(strings.TrimPrefix(path, "file://"))
	require.NoError(t, err)
	return st.Size()
}

func rows(recs ...arrow.RecordBatch) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		for _, r := range recs {
			if !yield(r, nil) {
				return
			}
		}
	}
}

// TestRecordsWritesGeoParquet writes two batches in one Records call, on
// v2 (a WKB binary column) and v3 (an Iceberg geometry field): the file
// is GeoParquet 1.1 stating the rows' bbox and types, has the bbox
// columns, reads back with the same rows, and its data file records its
// final size and row count.
func TestRecordsWritesGeoParquet(t *testing.T) {
	t.Parallel()
	for _, v := range []int{2, 3} {
		t.Run("v"+strconv.Itoa(v), func(t *testing.T) {
			t.Parallel()
			tbl := newTable(t, v)
			sc := arrowSchema(t, tbl)
			var files []iceberg.DataFile
			for df, err := range geowrite.Records(t.Context(), tbl, sc, rows(batch(t, sc, points[:3]), batch(t, sc, points[3:]))) {
				require.NoError(t, err)
				files = append(files, df)
			}
			require.Len(t, files, 1)
			df := files[0]
			got := geoparquettest.Check(t, df.FilePath())
			assert.Equal(t, "geometry", got.Primary)
			assert.Equal(t, []string{"Point"}, got.Declared)
			assert.Equal(t, []float64{-20, -5, 10, 7.5}, got.BBox)
			assert.Equal(t, int64(len(points)), got.Rows)
			assert.Equal(t, points, readBack(t, df.FilePath()))
			assert.Equal(t, int64(len(points)), df.Count())
			assert.Equal(t, fileSize(t, df.FilePath()), df.FileSizeBytes(), "the recorded size is the file's, footer included")
		})
	}
}

// TestSinkCutsFiles writes the rows through a Sink cutting files of 3
// rows: each file's geo metadata states its own rows' bbox, and the files
// read back in order are the rows written.
func TestSinkCutsFiles(t *testing.T) {
	t.Parallel()
	tbl := newTable(t, 2)
	sc := arrowSchema(t, tbl)
	s := geowrite.NewSink(t.Context(), tbl, sc, geowrite.SinkConfig{FileRows: func(int) int64 { return 3 }, Lanes: 2, Queue: 1})
	require.NoError(t, s.Write(batch(t, sc, points[:2])))
	require.NoError(t, s.Write(batch(t, sc, points[2:])))
	files, err := s.Close()
	require.NoError(t, err)
	require.Len(t, files, 3)
	wantBBox := [][]float64{{0, -5, 10, 4}, {-20, 1, 2, 7.5}, {-1, 3, -1, 3}}
	var back []point
	for i, df := range files {
		got := geoparquettest.Check(t, df.FilePath())
		assert.Equal(t, wantBBox[i], got.BBox, "file %d", i)
		assert.Equal(t, fileSize(t, df.FilePath()), df.FileSizeBytes(), "file %d", i)
		back = append(back, readBack(t, df.FilePath())...)
	}
	assert.Equal(t, points, back)
}

// TestSinkQueueBoundsBatches checks that a Sink holds about Lanes × Queue
// batches whatever the file size: the rows of one large file are written
// faster than they are encoded, and the batches not yet written (their
// buffers not yet freed) never number more than the sink's queue plus the
// few in the writer's hands. iceberg-go's writer queues 64 batches per file
// unless told otherwise, which held hundreds of MiB at a 128 MiB target.
func TestSinkQueueBoundsBatches(t *testing.T) {
	t.Parallel()
	tbl := newTable(t, 2)
	sc := arrowSchema(t, tbl)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	rows := make([]point, 2000)
	for i := range rows {
		rows[i] = point{int64(i), float64(i % 360), float64(i % 90)}
	}
	one := batchFrom(t, mem, sc, rows)
	per := mem.CurrentAlloc()
	one.Release()
	const queue, batches = 1, 150
	s := geowrite.NewSink(t.Context(), tbl, sc, geowrite.SinkConfig{FileRows: func(int) int64 { return math.MaxInt64 }, Lanes: 1, Queue: queue})
	most := 0
	for range batches {
		most = max(most, mem.CurrentAlloc()/per)
		require.NoError(t, s.Write(batchFrom(t, mem, sc, rows)))
	}
	files, err := s.Close()
	require.NoError(t, err)
	require.Len(t, files, 1)
	assert.Equal(t, int64(batches*len(rows)), files[0].Count())
	assert.LessOrEqual(t, most, queue+3, "batches held before a Write")
	mem.AssertSize(t, 0)
}

// TestFirstRowIDs assigns first row ids on v3 from the table's next row
// id, in order and by row count, and leaves v2 files alone.
func TestFirstRowIDs(t *testing.T) {
	t.Parallel()
	for _, v := range []int{2, 3} {
		tbl := newTable(t, v)
		sc := arrowSchema(t, tbl)
		s := geowrite.NewSink(t.Context(), tbl, sc, geowrite.SinkConfig{FileRows: func(i int) int64 { return int64(2 + i) }, Lanes: 1, Queue: 1})
		require.NoError(t, s.Write(batch(t, sc, points)))
		files, err := s.Close()
		require.NoError(t, err)
		require.Len(t, files, 3) // 2, 3 and the 2 left
		out, err := geowrite.FirstRowIDs(tbl.Metadata(), files)
		require.NoError(t, err)
		if v < 3 {
			assert.Equal(t, files, out)
			continue
		}
		next := tbl.Metadata().NextRowID()
		for i, df := range out {
			require.NotNil(t, df.FirstRowID(), "file %d", i)
			assert.Equal(t, next, *df.FirstRowID(), "file %d", i)
			assert.Equal(t, files[i].FilePath(), df.FilePath())
			assert.Equal(t, files[i].FileSizeBytes(), df.FileSizeBytes())
			next += df.Count()
		}
		assert.Equal(t, int64(len(points)), next-tbl.Metadata().NextRowID())
	}
}

// drainPieces reads every piece of pieces, releasing it: the pieces'
// row counts, the ids they hold in order, and the errors passed on.
func drainPieces(pieces iter.Seq2[arrow.RecordBatch, error]) (sizes, ids []int64, errs []error) {
	for rec, err := range pieces {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		sizes = append(sizes, rec.NumRows())
		ids = append(ids, rec.Column(0).(*array.Int64).Int64Values()...)
		rec.Release()
	}
	return sizes, ids, errs
}

// TestPieces cuts batches of 7 rows into pieces of at most 3 and 7 rows:
// the pieces hold the same rows in the same order, a batch that fits is
// handed on as it is, an error is passed on, and every buffer is
// released, also when the receiver stops early.
func TestPieces(t *testing.T) {
	t.Parallel()
	sc := arrowSchema(t, newTable(t, 2))
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	rows := func(yield func(arrow.RecordBatch, error) bool) {
		for _, b := range [][]point{points, points[:2]} {
			if !yield(batchFrom(t, mem, sc, b), nil) {
				return
			}
		}
		yield(nil, assert.AnError)
	}
	for _, tc := range []struct {
		n     int64
		sizes []int64
	}{{3, []int64{3, 3, 1, 2}}, {7, []int64{7, 2}}} {
		sizes, ids, errs := drainPieces(geowrite.Pieces(rows, tc.n))
		assert.Equal(t, tc.sizes, sizes, "pieces of at most %d rows", tc.n)
		assert.Equal(t, []int64{1, 2, 3, 4, 5, 6, 7, 1, 2}, ids, "pieces of at most %d rows", tc.n)
		assert.Equal(t, []error{assert.AnError}, errs)
		mem.AssertSize(t, 0)
	}
	for rec := range geowrite.Pieces(rows, 3) {
		rec.Release()
		break
	}
	mem.AssertSize(t, 0)
}

// TestAlignedPieces cuts batches of 7 and 2 rows into pieces of exactly
// 3 rows from the first (joining the piece that spans the batches), the
// same pieces as from one batch of all 9 rows; an error is passed on and
// every buffer is released, also when the receiver stops early.
func TestAlignedPieces(t *testing.T) {
	t.Parallel()
	sc := arrowSchema(t, newTable(t, 2))
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	all := append(slices.Clone(points), points[:2]...)
	batched := func(parts ...[]point) iter.Seq2[arrow.RecordBatch, error] {
		return func(yield func(arrow.RecordBatch, error) bool) {
			for _, b := range parts {
				if !yield(batchFrom(t, mem, sc, b), nil) {
					return
				}
			}
			yield(nil, assert.AnError)
		}
	}
	cut := func(rows iter.Seq2[arrow.RecordBatch, error], n int64) ([]int64, []int64, []error) {
		return drainPieces(geowrite.AlignedPieces(rows, n))
	}
	wantSizes, wantIDs, _ := cut(batched(all), 3)
	require.Equal(t, []int64{3, 3, 3}, wantSizes)
	for _, parts := range [][][]point{{points, points[:2]}, {points[:1], points[1:5], points[5:], points[:2]}} {
		sizes, ids, errs := cut(batched(parts...), 3)
		assert.Equal(t, wantSizes, sizes, "pieces of exactly 3 rows however batched")
		assert.Equal(t, wantIDs, ids)
		assert.Equal(t, []error{assert.AnError}, errs)
		mem.AssertSize(t, 0)
	}
	sizes, _, _ := cut(batched(points[:2]), 3)
	assert.Equal(t, []int64{2}, sizes, "a short last piece")
	for rec := range geowrite.AlignedPieces(batched(points[:1], points[1:]), 3) {
		rec.Release()
		break
	}
	mem.AssertSize(t, 0)
}
