package verify_test

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/engine/verify"
	"github.com/geocompact/geocompact/spatial"
)

// row is one row of the test schema: an id, a name, a point geometry and
// its bbox columns (the point's x and y twice).
type row struct {
	id   int64
	name string
	x, y float64
	ok   bool // false: the name is null
}

var rowSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "geometry", Type: arrow.BinaryTypes.Binary},
	{Name: "bbox_minx", Type: arrow.PrimitiveTypes.Float64},
	{Name: "bbox_miny", Type: arrow.PrimitiveTypes.Float64},
	{Name: "bbox_maxx", Type: arrow.PrimitiveTypes.Float64},
	{Name: "bbox_maxy", Type: arrow.PrimitiveTypes.Float64},
}, nil)

// pointWKB is the little-endian WKB of POINT(x y).
func pointWKB(x, y float64) []byte {
	b := []byte{1}                             // little endian
	b = binary.LittleEndian.AppendUint32(b, 1) // Point
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(y))
}

// batch builds one record batch of rows.
func batch(t testing.TB, rows []row) arrow.RecordBatch {
	t.Helper()
	b := array.NewRecordBuilder(memory.DefaultAllocator, rowSchema)
	defer b.Release()
	for _, r := range rows {
		b.Field(0).(*array.Int64Builder).Append(r.id)
		if r.ok {
			b.Field(1).(*array.StringBuilder).Append(r.name)
		} else {
			b.Field(1).AppendNull()
		}
		b.Field(2).(*array.BinaryBuilder).Append(pointWKB(r.x, r.y))
		for i, v := range []float64{r.x, r.y, r.x, r.y} {
			b.Field(3 + i).(*array.Float64Builder).Append(v)
		}
	}
	rec := b.NewRecordBatch()
	t.Cleanup(rec.Release)
	return rec
}

// digest digests the batches of rows, each slice one batch, with the
// spatial columns verify.Columns finds.
func digest(t testing.TB, batches ...[]row) verify.Digest {
	t.Helper()
	geom, bbox := verify.Columns(rowSchema, "geometry")
	d := verify.NewDigest()
	for _, rows := range batches {
		require.NoError(t, d.Add(batch(t, rows), geom, bbox))
	}
	return d
}

func testRows() []row {
	return []row{
		{1, "a", 0, 0, true},
		{2, "b", 10, -5, true},
		{3, "", 3, 4, false},
		{4, "d", -20, 7.5, true},
		{5, "e", 1, 1, true},
	}
}

func TestDigestIgnoresOrderAndBatching(t *testing.T) {
	t.Parallel()
	rows := testRows()
	want := digest(t, rows)
	reversed := make([]row, len(rows))
	for i, r := range rows {
		reversed[len(rows)-1-i] = r
	}
	assert.Equal(t, want, digest(t, reversed), "rows in reverse order")
	assert.Equal(t, want, digest(t, rows[3:], rows[:1], rows[1:3]), "rows in three batches, out of order")

	merged := digest(t, rows[:2])
	merged.Merge(digest(t, rows[2:]))
	assert.Equal(t, want, merged, "digests of two halves, merged")
	assert.Empty(t, want.Diff(merged))
}

func TestDigestSeesAChangedRow(t *testing.T) {
	t.Parallel()
	want := digest(t, testRows())
	cases := []struct {
		name   string
		change func(*row)
		diff   string
	}{
		{"int", func(r *row) { r.id = 6 }, "content checksum differs (same row count and extent)"},
		{"string", func(r *row) { r.name = "E" }, "content checksum differs (same row count and extent)"},
		{"null", func(r *row) { r.ok = false }, "content checksum differs (same row count and extent)"},
		{"coordinate inside the extent", func(r *row) { r.x = 2 }, "content checksum differs (same row count and extent)"},
		{"coordinate outside the extent", func(r *row) { r.y = -6 }, "bbox extent"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rows := testRows()
			tc.change(&rows[4])
			got := digest(t, rows)
			assert.NotEqual(t, want, got)
			assert.Contains(t, want.Diff(got), tc.diff)
		})
	}
}

func TestDigestSeesSwappedValues(t *testing.T) {
	t.Parallel()
	// The same ids and the same names, paired differently: a digest of
	// each column alone would not see it.
	rows := testRows()
	swapped := testRows()
	swapped[0].name, swapped[1].name = rows[1].name, rows[0].name
	assert.Equal(t, "content checksum differs (same row count and extent)", digest(t, rows).Diff(digest(t, swapped)))
}

func TestDigestCountsRows(t *testing.T) {
	t.Parallel()
	rows := testRows()
	d := digest(t, rows[:2], rows[2:])
	assert.Equal(t, int64(len(rows)), d.Rows)
	assert.Equal(t, spatial.Bound{MinX: -20, MinY: -5, MaxX: 10, MaxY: 7.5}, d.Extent)

	assert.Equal(t, "row count 5 before, 4 after", d.Diff(digest(t, rows[:4])))
	doubled := digest(t, rows, rows[4:])
	assert.Equal(t, "row count 5 before, 6 after", d.Diff(doubled))

	empty := verify.NewDigest()
	assert.Zero(t, empty.Rows)
	assert.True(t, empty.Extent.IsEmpty())
	require.NoError(t, empty.Add(batch(t, nil), -1, [4]int{-1, -1, -1, -1}))
	assert.Equal(t, verify.NewDigest(), empty, "an empty batch changes nothing")
}

func TestDigestExtentFromGeometry(t *testing.T) {
	t.Parallel()
	rows := testRows()
	rows[0].x = 50 // the bbox columns and the geometry both say 50
	withBBox := digest(t, rows)
	d := verify.NewDigest()
	require.NoError(t, d.Add(batch(t, rows), 2, [4]int{-1, -1, -1, -1}))
	assert.Equal(t, withBBox.Extent, d.Extent, "the WKB envelope gives the same extent")
	assert.Equal(t, spatial.Bound{MinX: -20, MinY: -5, MaxX: 50, MaxY: 7.5}, d.Extent)
}

func TestColumns(t *testing.T) {
	t.Parallel()
	geom, bbox := verify.Columns(rowSchema, "geometry")
	assert.Equal(t, 2, geom)
	assert.Equal(t, [4]int{3, 4, 5, 6}, bbox)

	geom, bbox = verify.Columns(rowSchema, "")
	assert.Equal(t, -1, geom, "no geometry column named")
	assert.Equal(t, [4]int{3, 4, 5, 6}, bbox)

	partial := arrow.NewSchema(append(rowSchema.Fields()[:3:3], rowSchema.Field(3), rowSchema.Field(4)), nil)
	geom, bbox = verify.Columns(partial, "geometry")
	assert.Equal(t, 2, geom)
	assert.Equal(t, [4]int{-1, -1, -1, -1}, bbox, "two of four bbox columns count as none")
}

// TestDigestSameWithOrWithoutValidityBitmap: a column that holds no null
// digests alike whether or not it carries a validity bitmap (writers and
// readers differ on whether they allocate one), sliced or whole, and a
// null still counts where there is one.
func TestDigestSameWithOrWithoutValidityBitmap(t *testing.T) {
	t.Parallel()
	rows := testRows()
	for i := range rows {
		rows[i].ok = true
	}
	geom, bbox := verify.Columns(rowSchema, "geometry")
	rec := batch(t, rows)
	cols := make([]arrow.Array, rec.NumCols())
	for c, col := range rec.Columns() {
		require.NotNil(t, col.Data().Buffers()[0], "the builder gave column %d a bitmap", c)
		bufs := append([]*memory.Buffer{nil}, col.Data().Buffers()[1:]...)
		data := array.NewData(col.DataType(), col.Len(), bufs, nil, 0, col.Data().Offset())
		cols[c] = array.MakeFromData(data)
		data.Release()
	}
	bare := array.NewRecordBatch(rowSchema, cols, rec.NumRows())
	defer bare.Release()
	for _, c := range cols {
		c.Release()
	}
	with, without := verify.NewDigest(), verify.NewDigest()
	require.NoError(t, with.Add(rec, geom, bbox))
	require.NoError(t, without.Add(bare, geom, bbox))
	assert.Equal(t, with, without)

	sliced := verify.NewDigest()
	for _, r := range []arrow.RecordBatch{rec.NewSlice(0, 2), bare.NewSlice(2, 5)} {
		require.NoError(t, sliced.Add(r, geom, bbox))
		r.Release()
	}
	assert.Equal(t, with, sliced)

	nulls := testRows() // one null name
	assert.NotEqual(t, with, digest(t, nulls))
	nulls[2].ok, nulls[2].name = true, ""
	assert.NotEqual(t, digest(t, testRows()), digest(t, nulls), "a null and an empty string differ")
}
