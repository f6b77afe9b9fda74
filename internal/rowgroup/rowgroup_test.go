package rowgroup_test

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/internal/rowgroup"
	"github.com/geocompact/geocompact/spatial"
)

var flat = rowgroup.Columns(spatial.BBoxColumns)

// writeBoxes writes boxes as the four flat bbox columns (a NaN minx is a
// null box), two rows a row group, and returns the file's path.
func writeBoxes(t *testing.T, boxes []spatial.Bound, props ...parquet.WriterProperty) string {
	t.Helper()
	fields := make([]arrow.Field, 4)
	for i, name := range spatial.BBoxColumns {
		fields[i] = arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Float64, Nullable: true}
	}
	sc := arrow.NewSchema(fields, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for _, box := range boxes {
		for i, v := range []float64{box.MinX, box.MinY, box.MaxX, box.MaxY} {
			fb := b.Field(i).(*array.Float64Builder)
			if math.IsNaN(box.MinX) {
				fb.AppendNull()
			} else {
				fb.Append(v)
			}
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	path := filepath.Join(t.TempDir(), "f.parquet")
	out, err := os.Create(path)
	require.NoError(t, err)
	props = append([]parquet.WriterProperty{parquet.WithMaxRowGroupLength(2)}, props...)
	w, err := pqarrow.NewFileWriter(sc, out, parquet.NewWriterProperties(props...), pqarrow.DefaultWriterProps())
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
	return path
}

func pt(x, y float64) spatial.Bound { return spatial.Bound{MinX: x, MinY: y, MaxX: x, MaxY: y} }

func TestReadFileBoundsFromStatistics(t *testing.T) {
	t.Parallel()
	null := spatial.Bound{MinX: math.NaN()}
	path := writeBoxes(t, []spatial.Bound{pt(0, 0), pt(1, 1), pt(10, 10), {MinX: 11, MinY: 11, MaxX: 12, MaxY: 13}, null, null})
	f, err := rowgroup.ReadFile(os.Open, path, flat)
	require.NoError(t, err)
	require.True(t, f.Bounded)
	require.Len(t, f.Groups, 3)
	assert.Equal(t, spatial.Bound{MinX: 0, MinY: 0, MaxX: 1, MaxY: 1}, f.Groups[0].Bound)
	assert.Equal(t, spatial.Bound{MinX: 10, MinY: 10, MaxX: 12, MaxY: 13}, f.Groups[1].Bound)
	assert.True(t, f.Groups[2].Bound.IsEmpty(), "a group of null boxes has an empty box")
	for _, g := range f.Groups {
		assert.Equal(t, int64(2), g.Rows)
		assert.Positive(t, g.Bytes)
	}
	n, _ := f.Read(spatial.Bound{MinX: 9, MinY: 9, MaxX: 20, MaxY: 20})
	assert.Equal(t, 1, n)
	a, ok := rowgroup.MeanArea([]rowgroup.File{f})
	require.True(t, ok)
	assert.InDelta(t, (1.0+2*3)/2/(12*13), a, 1e-12)

	// Without columns the groups are read, not bounded.
	f, err = rowgroup.ReadFile(os.Open, path, rowgroup.Columns{})
	require.NoError(t, err)
	assert.False(t, f.Bounded)
	assert.Len(t, f.Groups, 3)
}

// TestReadFileWithoutStatistics: a footer without bbox statistics, or
// without the columns, leaves the file unbounded; its area is unknown,
// not 0, and a window reads it whole.
func TestReadFileWithoutStatistics(t *testing.T) {
	t.Parallel()
	path := writeBoxes(t, []spatial.Bound{pt(0, 0), pt(1, 1), pt(10, 10)}, parquet.WithStats(false))
	for _, cols := range []rowgroup.Columns{flat, {"bbox.xmin", "bbox.ymin", "bbox.xmax", "bbox.ymax"}} {
		f, err := rowgroup.ReadFile(os.Open, path, cols)
		require.NoError(t, err)
		assert.False(t, f.Bounded, "%v", cols)
		require.Len(t, f.Groups, 2)
		f.Size = 1000
		n, b := f.Read(spatial.Bound{MinX: 50, MinY: 50, MaxX: 60, MaxY: 60})
		assert.Equal(t, 2, n)
		assert.Equal(t, int64(1000), b)
		_, ok := rowgroup.MeanArea([]rowgroup.File{f})
		assert.False(t, ok)
	}
}

func TestReadFileRefusesBadFooter(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "junk.parquet")
	require.NoError(t, os.WriteFile(path, []byte("PAR1 not a footer PAR1"), 0o644))
	_, err := rowgroup.ReadFile(os.Open, path, flat)
	require.Error(t, err)
	assert.Contains(t, err.Error(), path)
}

func TestColumnsOf(t *testing.T) {
	t.Parallel()
	c, ok := rowgroup.ColumnsOf(spatial.Columns{BBox: spatial.BBoxColumns})
	require.True(t, ok)
	assert.Equal(t, flat, c)
	c, ok = rowgroup.ColumnsOf(spatial.Columns{Covering: "bbox", CoveringFields: [4]string{"xmin", "ymin", "xmax", "ymax"}})
	require.True(t, ok)
	assert.Equal(t, rowgroup.Columns{"bbox.xmin", "bbox.ymin", "bbox.xmax", "bbox.ymax"}, c)
	_, ok = rowgroup.ColumnsOf(spatial.Columns{Geometry: "geom"})
	assert.False(t, ok)
}

// TestBoundRows cuts a file's row boxes at its row groups, and leaves a
// file whose rows are not those its footer counts unbounded.
func TestBoundRows(t *testing.T) {
	t.Parallel()
	rows := []spatial.Bound{pt(0, 0), pt(1, 1), pt(10, 10), pt(11, 12)}
	f := rowgroup.File{Size: 200, Groups: []rowgroup.Group{{Rows: 2, Bytes: 100}, {Rows: 2, Bytes: 50}}}
	f.BoundRows(rows)
	require.True(t, f.Bounded)
	assert.Equal(t, spatial.Bound{MinX: 0, MinY: 0, MaxX: 1, MaxY: 1}, f.Groups[0].Bound)
	assert.Equal(t, spatial.Bound{MinX: 10, MinY: 10, MaxX: 11, MaxY: 12}, f.Groups[1].Bound)
	n, b := f.Read(spatial.Bound{MinX: 9, MinY: 9, MaxX: 20, MaxY: 20})
	assert.Equal(t, 1, n)
	assert.Equal(t, int64(50), b)
	a, ok := rowgroup.MeanArea([]rowgroup.File{f})
	require.True(t, ok)
	assert.InDelta(t, (1.0+2.0)/2/(11*12), a, 1e-12)

	// Deletes applied: three rows read of the four the footer counts.
	f.BoundRows(rows[:3])
	assert.False(t, f.Bounded)
	n, b = f.Read(spatial.Bound{MinX: 9, MinY: 9, MaxX: 20, MaxY: 20})
	assert.Equal(t, 2, n)
	assert.Equal(t, int64(200), b)
}
