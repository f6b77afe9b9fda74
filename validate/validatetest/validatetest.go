// Package validatetest writes small GeoParquet files for tests: the
// fixtures under testdata/geoparquet, one per defect, and ad-hoc files for
// command and ingest tests.
package validatetest

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// Row is one row of a test file. A nil WKB is a null geometry; a nil BBox
// is null bbox values.
type Row struct {
	WKB  []byte
	BBox *[4]float64
}

// File describes a GeoParquet file to write.
type File struct {
	Rows []Row
	// Geo is the raw "geo" metadata value; empty writes none.
	Geo string
	// Column is the geometry column's name; default "geometry".
	Column string
	// WKT writes the geometry column as a string column (of the WKB bytes),
	// the way a WKT column would look.
	WKT bool
	// NoBBox leaves out the bbox columns.
	NoBBox bool
	// Covering writes the bbox as a GeoParquet 1.1 covering struct column
	// "bbox" {xmin, ymin, xmax, ymax} instead of four columns.
	Covering bool
	// RowGroupRows caps rows per row group; default 1024.
	RowGroupRows int64
	// Extra adds an int64 "id" column (row number) when true.
	Extra bool
	// OtherLayout writes with settings unlike the default ones, standing in
	// for another writer: no dictionary encoding, data page v2, gzip, no
	// column statistics, the Arrow schema stored in the footer.
	OtherLayout bool
	// PageSize, when set, caps data pages at this many bytes, so small
	// files still span many pages.
	PageSize int64
}

// Schema returns the Arrow schema f is written with.
func (f File) Schema() *arrow.Schema {
	col := f.Column
	if col == "" {
		col = "geometry"
	}
	gt := arrow.DataType(arrow.BinaryTypes.Binary)
	if f.WKT {
		gt = arrow.BinaryTypes.String
	}
	fields := []arrow.Field{}
	if f.Extra {
		fields = append(fields, arrow.Field{Name: "id", Type: arrow.PrimitiveTypes.Int64})
	}
	fields = append(fields, arrow.Field{Name: col, Type: gt, Nullable: true})
	switch {
	case f.NoBBox:
	case f.Covering:
		fields = append(fields, arrow.Field{Name: "bbox", Nullable: true, Type: arrow.StructOf(
			arrow.Field{Name: "xmin", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
			arrow.Field{Name: "ymin", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
			arrow.Field{Name: "xmax", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
			arrow.Field{Name: "ymax", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		)})
	default:
		for _, n := range []string{"bbox_minx", "bbox_miny", "bbox_maxx", "bbox_maxy"} {
			fields = append(fields, arrow.Field{Name: n, Type: arrow.PrimitiveTypes.Float64, Nullable: true})
		}
	}
	return arrow.NewSchema(fields, nil)
}

// Record builds f's rows as one Arrow record.
func (f File) Record() arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, f.Schema())
	defer b.Release()
	k := 0
	if f.Extra {
		for i := range f.Rows {
			b.Field(0).(*array.Int64Builder).Append(int64(i))
		}
		k = 1
	}
	for _, r := range f.Rows {
		switch gb := b.Field(k).(type) {
		case *array.BinaryBuilder:
			if r.WKB == nil {
				gb.AppendNull()
			} else {
				gb.Append(r.WKB)
			}
		case *array.StringBuilder:
			if r.WKB == nil {
				gb.AppendNull()
			} else {
				gb.Append(string(r.WKB))
			}
		}
	}
	switch {
	case f.NoBBox:
	case f.Covering:
		sb := b.Field(k + 1).(*array.StructBuilder)
		for _, r := range f.Rows {
			sb.Append(true)
			for j := range 4 {
				fb := sb.FieldBuilder(j).(*array.Float64Builder)
				if r.BBox == nil {
					fb.AppendNull()
				} else {
					fb.Append(r.BBox[j])
				}
			}
		}
	default:
		for j := range 4 {
			fb := b.Field(k + 1 + j).(*array.Float64Builder)
			for _, r := range f.Rows {
				if r.BBox == nil {
					fb.AppendNull()
				} else {
					fb.Append(r.BBox[j])
				}
			}
		}
	}
	return b.NewRecordBatch()
}

// Write writes f to path as Parquet (snappy, deterministic).
func Write(t testing.TB, path string, f File) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	rg := f.RowGroupRows
	if rg <= 0 {
		rg = 1024
	}
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy), parquet.WithMaxRowGroupLength(rg), parquet.WithCreatedBy("geocompact validatetest"))
	if f.PageSize > 0 {
		props = parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy), parquet.WithMaxRowGroupLength(rg),
			parquet.WithDataPageSize(f.PageSize), parquet.WithCreatedBy("geocompact validatetest"))
	}
	aprops := pqarrow.DefaultWriterProps()
	if f.OtherLayout {
		props = parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Gzip), parquet.WithMaxRowGroupLength(rg),
			parquet.WithDictionaryDefault(false), parquet.WithDataPageVersion(parquet.DataPageV2), parquet.WithStats(false),
			parquet.WithCreatedBy("geocompact validatetest (other layout)"))
		aprops = pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema())
	}
	fw, err := pqarrow.NewFileWriter(f.Schema(), out, props, aprops)
	if err != nil {
		t.Fatal(err)
	}
	if f.Geo != "" {
		if err := fw.AppendKeyValueMetadata("geo", f.Geo); err != nil {
			t.Fatal(err)
		}
	}
	rec := f.Record()
	defer rec.Release()
	if err := fw.WriteBuffered(rec); err != nil {
		t.Fatal(err)
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
}

// Geo returns a GeoParquet 1.1 "geo" value for column "geometry" with the
// given raw crs member ("" omits it).
func Geo(crs string) string {
	c := ""
	if crs != "" {
		c = `,"crs":` + crs
	}
	return `{"version":"1.1.0","primary_column":"geometry","columns":{"geometry":{"encoding":"WKB","geometry_types":[]` + c + `}}}`
}

// GeoFlatCovering is a GeoParquet 1.1 "geo" value for a Point column
// "geometry" whose covering names the bbox columns by flat column names,
// not the [struct column, field] paths the specification asks for.
const GeoFlatCovering = `{"version":"1.1.0","primary_column":"geometry","columns":{"geometry":{"encoding":"WKB","geometry_types":["Point"],` +
	`"covering":{"bbox":{"xmin":["bbox_minx"],"ymin":["bbox_miny"],"xmax":["bbox_maxx"],"ymax":["bbox_maxy"]}}}}}`

// Box returns a bbox pointer.
func Box(minx, miny, maxx, maxy float64) *[4]float64 { return &[4]float64{minx, miny, maxx, maxy} }

// WKB builds WKB values field by field, so tests can describe malformed
// ones no encoder would produce.
type WKB struct {
	Order binary.AppendByteOrder
	Buf   []byte
}

// LE and BE start a little- or big-endian value.
func LE() *WKB { return &WKB{Order: binary.LittleEndian} }

// BE starts a big-endian value.
func BE() *WKB { return &WKB{Order: binary.BigEndian} }

// Hdr appends a byte-order flag and a type code.
func (w *WKB) Hdr(code uint32) *WKB {
	if w.Order == binary.AppendByteOrder(binary.BigEndian) {
		w.Buf = append(w.Buf, 0)
	} else {
		w.Buf = append(w.Buf, 1)
	}
	w.Buf = w.Order.AppendUint32(w.Buf, code)
	return w
}

// N appends a count.
func (w *WKB) N(n uint32) *WKB { w.Buf = w.Order.AppendUint32(w.Buf, n); return w }

// F appends ordinates.
func (w *WKB) F(vs ...float64) *WKB {
	for _, v := range vs {
		w.Buf = w.Order.AppendUint64(w.Buf, math.Float64bits(v))
	}
	return w
}

// Raw appends bytes.
func (w *WKB) Raw(b ...byte) *WKB { w.Buf = append(w.Buf, b...); return w }

// Point returns little-endian WKB for POINT(x y).
func Point(x, y float64) []byte { return LE().Hdr(1).F(x, y).Buf }

// Square returns little-endian WKB for an axis-aligned square polygon.
func Square(x, y, size float64) []byte {
	return LE().Hdr(3).N(1).N(5).F(x, y, x+size, y, x+size, y+size, x, y+size, x, y).Buf
}

// Points returns n points on a diagonal with exact bboxes.
func Points(n int) []Row {
	rows := make([]Row, n)
	for i := range rows {
		x, y := float64(i%360)-180+0.5, float64(i%180)-90+0.25
		rows[i] = Row{WKB: Point(x, y), BBox: Box(x, y, x, y)}
	}
	return rows
}

// PointsFile writes a valid GeoParquet file of n points with bbox columns
// in a new temporary directory and returns its path.
func PointsFile(t testing.TB, n int) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "pts.parquet")
	Write(t, p, File{Rows: Points(n), Geo: Geo(""), Extra: true})
	return p
}
