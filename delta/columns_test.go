package delta

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/stretchr/testify/require"
)

// flatSchema holds a column of every type columnsWriter takes, required
// and nullable, with schema metadata and a field id as Delta's column
// mapping writes them.
func flatSchema() *arrow.Schema {
	id := arrow.NewMetadata([]string{"PARQUET:field_id"}, []string{"7"})
	return arrow.NewSchema([]arrow.Field{
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "i8", Type: arrow.PrimitiveTypes.Int8, Nullable: true},
		{Name: "i16", Type: arrow.PrimitiveTypes.Int16},
		{Name: "i32", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Metadata: id},
		{Name: "f32", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: "f64", Type: arrow.PrimitiveTypes.Float64},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "wkb", Type: arrow.BinaryTypes.Binary, Nullable: true},
		{Name: "ls", Type: arrow.BinaryTypes.LargeString, Nullable: true},
		{Name: "lb", Type: arrow.BinaryTypes.LargeBinary},
		{Name: "d", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
		{Name: "ntz", Type: &arrow.TimestampType{Unit: arrow.Microsecond}},
	}, func() *arrow.Metadata { m := arrow.NewMetadata([]string{"k"}, []string{"v"}); return &m }())
}

// flatBatch is n rows of sc; a nullable column is null where nulls says.
func flatBatch(t *testing.T, sc *arrow.Schema, n int, seed uint64, nulls func(int) bool) arrow.RecordBatch {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 3))
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for i := range n {
		for j, f := range sc.Fields() {
			fb := b.Field(j)
			if f.Nullable && nulls(i+j) {
				fb.AppendNull()
				continue
			}
			v := r.Int64N(1000)
			switch fb := fb.(type) {
			case *array.BooleanBuilder:
				fb.Append(v%2 == 0)
			case *array.Int8Builder:
				fb.Append(int8(v))
			case *array.Int16Builder:
				fb.Append(int16(v))
			case *array.Int32Builder:
				fb.Append(int32(v))
			case *array.Int64Builder:
				fb.Append(v)
			case *array.Float32Builder:
				fb.Append(float32(v) / 7)
			case *array.Float64Builder:
				fb.Append(float64(v) / 7)
			case *array.StringBuilder:
				fb.Append(fmt.Sprint("s", v))
			case *array.BinaryBuilder:
				fb.Append([]byte(fmt.Sprint("wkb", v)))
			case *array.LargeStringBuilder:
				fb.Append(fmt.Sprint("ls", v))
			case *array.Date32Builder:
				fb.Append(arrow.Date32(v))
			case *array.TimestampBuilder:
				fb.Append(arrow.Timestamp(v * 1e6))
			default:
				t.Fatalf("no value for %T", fb)
			}
		}
	}
	return b.NewRecordBatch()
}

// write writes batches through w: each as a row group of its own, or,
// when cut is positive, into row groups of cut rows.
func write(t *testing.T, w parquetWriter, batches []arrow.RecordBatch, cut int64) {
	t.Helper()
	in := int64(0)
	for _, rec := range batches {
		if cut <= 0 {
			require.NoError(t, w.Write(rec))
			continue
		}
		for off := int64(0); off < rec.NumRows(); {
			if in == cut {
				require.NoError(t, w.NewBufferedRowGroupChecked())
				in = 0
			}
			n := min(rec.NumRows()-off, cut-in)
			part := rec.NewSlice(off, off+n)
			require.NoError(t, w.WriteBuffered(part))
			part.Release()
			in, off = in+n, off+n
		}
	}
	require.NoError(t, w.AppendKeyValueMetadata("geo", `{"version":"1.1.0"}`))
	require.NoError(t, w.Close())
}

// The column-parallel writer writes, byte for byte, the file pqarrow's
// writer writes from the same batches: row groups a batch each, cut at a
// row count, split at the properties' maximum row group length, with
// nulls, without, all null, and with empty batches.
func TestColumnsWriterWritesPqarrowsFile(t *testing.T) {
	sc := flatSchema()
	require.True(t, flatColumns(sc))
	nulls := map[string]func(int) bool{
		"none":  func(int) bool { return false },
		"some":  func(i int) bool { return i%5 == 3 },
		"all":   func(int) bool { return true },
		"first": func(i int) bool { return i == 0 },
	}
	for name, null := range nulls {
		var batches []arrow.RecordBatch
		for k, n := range []int{1000, 0, 2500, 1, 4096} {
			batches = append(batches, flatBatch(t, sc, n, uint64(k), null))
		}
		for _, maxRows := range []int64{parquet.DefaultMaxRowGroupLen, 700} {
			for _, cut := range []int64{0, 1024, 3000} {
				t.Run(fmt.Sprintf("nulls=%s/max=%d/cut=%d", name, maxRows, cut), func(t *testing.T) {
					props := func() *parquet.WriterProperties {
						return parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd),
							parquet.WithMaxRowGroupLength(maxRows), parquet.WithDictionaryDefault(false),
							parquet.WithDictionaryFor("s", true), parquet.WithStats(true))
					}
					var want, got bytes.Buffer
					pw, err := pqarrow.NewFileWriter(sc, &want, props(), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
					require.NoError(t, err)
					write(t, pw, batches, cut)
					cw, err := newColumnsWriter(sc, &got, props(), pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
					require.NoError(t, err)
					write(t, cw, batches, cut)
					require.Greater(t, want.Len(), 1000)
					require.True(t, bytes.Equal(want.Bytes(), got.Bytes()), "the files differ: %d and %d bytes", want.Len(), got.Len())
				})
			}
		}
		for _, b := range batches {
			b.Release()
		}
	}
}

// A schema with a column columnsWriter does not take is written by
// pqarrow's writer.
func TestNestedColumnsFallBackToPqarrow(t *testing.T) {
	for _, dt := range []arrow.DataType{
		arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Float64}),
		arrow.ListOf(arrow.PrimitiveTypes.Int64),
		arrow.MapOf(arrow.BinaryTypes.String, arrow.BinaryTypes.String),
		&arrow.Decimal128Type{Precision: 10, Scale: 2},
		&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String},
	} {
		sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "c", Type: dt, Nullable: true}}, nil)
		require.False(t, flatColumns(sc), "%s", dt)
		w, err := newParquetWriter(sc, &bytes.Buffer{}, parquet.NewWriterProperties())
		require.NoError(t, err)
		require.IsType(t, &pqarrow.FileWriter{}, w, "%s", dt)
		require.NoError(t, w.Close())
	}
	w, err := newParquetWriter(flatSchema(), &bytes.Buffer{}, parquet.NewWriterProperties())
	require.NoError(t, err)
	require.IsType(t, &columnsWriter{}, w)
	require.NoError(t, w.Close())
}

// failAfter fails every write once n bytes were written.
type failAfter struct{ n int }

func (f *failAfter) Write(p []byte) (int, error) {
	if f.n < len(p) {
		return 0, fmt.Errorf("disk full")
	}
	f.n -= len(p)
	return len(p), nil
}

// A batch of another schema is refused, a failing sink fails the write or
// the close (never silently), and a closed writer takes no more.
func TestColumnsWriterRefuses(t *testing.T) {
	sc := flatSchema()
	rec := flatBatch(t, sc, 5000, 1, func(int) bool { return false })
	defer rec.Release()
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd))
	arrowProps := pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema())

	cw, err := newColumnsWriter(sc, &bytes.Buffer{}, props, arrowProps)
	require.NoError(t, err)
	other := flatBatch(t, arrow.NewSchema(sc.Fields()[:3], nil), 10, 1, func(int) bool { return false })
	defer other.Release()
	require.ErrorContains(t, cw.Write(other), "schema does not match")
	require.ErrorContains(t, cw.WriteBuffered(other), "schema does not match")
	require.NoError(t, cw.Close())
	require.ErrorContains(t, cw.Write(rec), "closed")

	for _, budget := range []int{0, 100, 20000} {
		cw, err := newColumnsWriter(sc, &failAfter{n: budget}, props, arrowProps)
		if err == nil {
			err = cw.Write(rec)
		}
		if err == nil {
			err = cw.Close()
		}
		require.ErrorContains(t, err, "disk full", "budget %d", budget)
	}
}
