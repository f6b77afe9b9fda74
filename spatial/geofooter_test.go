package spatial_test

import (
	"bytes"
	"io"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/spatial"
)

// nopCloser is a bytes.Buffer that can be closed.
type nopCloser struct{ bytes.Buffer }

func (*nopCloser) Close() error { return nil }

// writeParquet writes rows points through w with rowGroup rows per row
// group; geo, when set, is added the Parquet writer's own way.
func writeParquet(t *testing.T, w io.Writer, rows, rowGroup int, geo string) {
	t.Helper()
	sc := arrow.NewSchema([]arrow.Field{{Name: "geometry", Type: arrow.BinaryTypes.Binary}, {Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for i := range rows {
		b.Field(0).(*array.BinaryBuilder).Append([]byte{1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, byte(i)})
		b.Field(1).(*array.Int64Builder).Append(int64(i))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	props := parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(int64(rowGroup)))
	fw, err := pqarrow.NewFileWriter(sc, w, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	require.NoError(t, err)
	if geo != "" {
		require.NoError(t, fw.AppendKeyValueMetadata(spatial.GeoParquetKey, geo))
	}
	require.NoError(t, fw.Write(rec))
	require.NoError(t, fw.Close())
}

// TestFooterWriterMatchesParquetWriter checks that adding the geo key by
// rewriting the footer gives the very bytes the Parquet writer gives when
// it adds the key itself, whether the footer is held whole from the start
// or the file streams past a small hold.
func TestFooterWriterMatchesParquetWriter(t *testing.T) {
	const geo = `{"version":"1.1.0","primary_column":"geometry","columns":{"geometry":{"encoding":"WKB","geometry_types":["Point"]}}}`
	var want bytes.Buffer
	writeParquet(t, &want, 5000, 700, geo)
	for _, hold := range []int{0, 4096} {
		var out nopCloser
		fw := spatial.NewFooterWriter(&out, func() ([]byte, error) { return []byte(geo), nil }, hold)
		writeParquet(t, struct{ io.Writer }{fw}, 5000, 700, "") // as iceberg-go does: Close comes from the FileIO
		require.NoError(t, fw.Close())
		assert.Equal(t, want.Bytes(), out.Bytes(), "hold %d", hold)
		assert.EqualValues(t, out.Len(), fw.Size())

		pf, err := file.NewParquetReader(bytes.NewReader(out.Bytes()))
		require.NoError(t, err)
		v := pf.MetaData().KeyValueMetadata().FindValue(spatial.GeoParquetKey)
		require.NotNil(t, v)
		assert.Equal(t, geo, *v)
		assert.EqualValues(t, 5000, pf.NumRows())
	}
}

// TestFooterWriterPassesThroughUnfinished checks that a stream that is not
// a finished Parquet file (a write abandoned midway) is written as it is.
func TestFooterWriterPassesThroughUnfinished(t *testing.T) {
	var out nopCloser
	called := false
	fw := spatial.NewFooterWriter(&out, func() ([]byte, error) { called = true; return []byte("{}"), nil }, 8)
	_, err := fw.Write([]byte("PAR1 and some pages"))
	require.NoError(t, err)
	require.NoError(t, fw.Close())
	assert.Equal(t, "PAR1 and some pages", out.String())
	assert.False(t, called)
}

// TestFooterWriterFooterTooLarge checks that a footer larger than the hold
// is an error, not a corrupt file passed off as GeoParquet.
func TestFooterWriterFooterTooLarge(t *testing.T) {
	var out nopCloser
	fw := spatial.NewFooterWriter(&out, func() ([]byte, error) { return []byte("{}"), nil }, 64)
	writeParquet(t, struct{ io.Writer }{fw}, 3000, 10, "")
	assert.ErrorIs(t, fw.Close(), spatial.ErrFooter)
}
