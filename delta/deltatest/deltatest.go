// Package deltatest builds small spatial Delta tables for tests, with the
// delta package's own writer: a WKB geometry column, bbox columns (flat or
// as a covering struct) and an optional string partition column, so each
// data file's statistics carry the box of its rows.
package deltatest

import (
	"fmt"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/stretchr/testify/require"
	"github.com/twpayne/go-geom"

	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/spatial"
)

// Options shape the table Create makes.
type Options struct {
	// Covering holds the boxes in a struct column "bbox" {xmin, ymin, xmax,
	// ymax} instead of the flat columns spatial.BBoxColumns.
	Covering bool
	// NoBBox leaves the bbox columns out.
	NoBBox bool
	// Partitioned adds a string partition column "part".
	Partitioned bool
	// ColumnMapping is the column mapping mode: "" (none) or "name".
	ColumnMapping string
	// Properties are extra table properties.
	Properties map[string]string
}

// Row is one row of a data file: its geometry's WKB (nil: null) and the box
// written to its bbox columns.
type Row struct {
	WKB []byte
	Box spatial.Bound
}

// Point is a row holding the point (x, y) and its box.
func Point(t testing.TB, x, y float64) Row {
	t.Helper()
	b, err := spatial.EncodeWKB(geom.NewPointFlat(geom.XY, []float64{x, y}))
	require.NoError(t, err)
	return Row{WKB: b, Box: spatial.Bound{MinX: x, MinY: y, MaxX: x, MaxY: y}}
}

func field(name, typ string, id int, mapped bool) string {
	meta := "{}"
	if mapped {
		meta = fmt.Sprintf(`{"delta.columnMapping.id":%d,"delta.columnMapping.physicalName":"col-%d"}`, id, id)
	}
	return fmt.Sprintf(`{"name":%q,"type":%s,"nullable":true,"metadata":%s}`, name, typ, meta)
}

func schema(o Options) string {
	m := o.ColumnMapping == "name"
	fields := field("id", `"long"`, 1, m) + "," + field("geometry", `"binary"`, 2, m)
	switch {
	case o.NoBBox:
	case o.Covering:
		var sub string
		for i, n := range []string{"xmin", "ymin", "xmax", "ymax"} {
			if i > 0 {
				sub += ","
			}
			sub += field(n, `"double"`, 10+i, m)
		}
		fields += "," + field("bbox", `{"type":"struct","fields":[`+sub+`]}`, 3, m)
	default:
		for i, n := range spatial.BBoxColumns {
			fields += "," + field(n, `"double"`, 10+i, m)
		}
	}
	if o.Partitioned {
		fields += "," + field("part", `"string"`, 20, m)
	}
	return `{"type":"struct","fields":[` + fields + `]}`
}

// Create commits version 0 of a new table at dir and returns it.
func Create(t testing.TB, dir string, o Options) *delta.Table {
	t.Helper()
	tbl, err := delta.OpenLocal(dir)
	require.NoError(t, err)
	CreateIn(t, tbl, o)
	return tbl
}

// CreateIn commits version 0 of a new table into tbl, whatever its storage.
func CreateIn(t testing.TB, tbl *delta.Table, o Options) {
	t.Helper()
	conf := map[string]string{}
	proto := &delta.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}
	if o.ColumnMapping == "name" {
		conf["delta.columnMapping.mode"] = "name"
		proto = &delta.Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
			ReaderFeatures: []string{"columnMapping", "deletionVectors"},
			WriterFeatures: []string{"columnMapping", "deletionVectors"}}
	}
	for k, v := range o.Properties {
		conf[k] = v
	}
	var parts []string
	if o.Partitioned {
		parts = []string{"part"}
	}
	md := &delta.Metadata{ID: "deltatest", Format: delta.Format{Provider: "parquet"}, SchemaString: schema(o),
		PartitionColumns: parts, Configuration: conf}
	require.NoError(t, delta.Commit(t.Context(), tbl, 0, []delta.Action{
		delta.NewCommitInfo("CREATE TABLE", nil, -1, nil), {Protocol: proto}, {MetaData: md}}))
}

// Snapshot returns the table's latest snapshot.
func Snapshot(t testing.TB, tbl *delta.Table) *delta.Snapshot {
	t.Helper()
	s, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	return s
}

// WriteFile writes rows as the data file name (in partition part when the
// table is partitioned) and returns its add action, not yet committed. Row
// ids continue from firstID.
func WriteFile(t testing.TB, tbl *delta.Table, name, part string, firstID int64, rows ...Row) *delta.Add {
	t.Helper()
	return WriteFileWith(t, tbl, nil, name, part, firstID, rows...)
}

// WriteFileWith is WriteFile with the Parquet writer properties props
// (nil: the writer's own), for files of several row groups or without
// column statistics.
func WriteFileWith(t testing.TB, tbl *delta.Table, props *parquet.WriterProperties, name, part string, firstID int64, rows ...Row) *delta.Add {
	t.Helper()
	s := Snapshot(t, tbl)
	sc, err := s.ArrowSchema()
	require.NoError(t, err)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	third := ""
	if sc.NumFields() > 2 {
		third = sc.Field(2).Name
	}
	for i, r := range rows {
		b.Field(0).(*array.Int64Builder).Append(firstID + int64(i))
		if r.WKB == nil {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.BinaryBuilder).Append(r.WKB)
		}
		appendBox(b, third, r.Box)
		if idx := sc.FieldIndices("part"); len(idx) == 1 {
			b.Field(idx[0]).(*array.StringBuilder).Append(part)
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	var pv map[string]*string
	if len(s.Metadata.PartitionColumns) > 0 {
		pv = map[string]*string{s.Schema.Field("part").PhysicalName(s.ColumnMapping()): &part}
		name = "part=" + part + "/" + name
	}
	w, err := tbl.NewFileWriter(t.Context(), s, name, pv, props)
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	add, err := w.Close()
	require.NoError(t, err)
	return add
}

// appendBox writes box into the bbox columns that follow the geometry
// (field index 2 on): flat doubles or the covering struct.
func appendBox(b *array.RecordBuilder, third string, box spatial.Bound) {
	v := []float64{box.MinX, box.MinY, box.MaxX, box.MaxY}
	switch third {
	case "bbox":
		sb := b.Field(2).(*array.StructBuilder)
		sb.Append(true)
		for i, x := range v {
			sb.FieldBuilder(i).(*array.Float64Builder).Append(x)
		}
	case spatial.BBoxColumns[0]:
		for i, x := range v {
			b.Field(2 + i).(*array.Float64Builder).Append(x)
		}
	}
}

// Append commits adds as a WRITE (append) and returns the new version.
func Append(t testing.TB, tbl *delta.Table, adds ...*delta.Add) int64 {
	t.Helper()
	s := Snapshot(t, tbl)
	acts := []delta.Action{delta.NewCommitInfo("WRITE", map[string]any{"mode": "Append"}, s.Version,
		map[string]any{"numFiles": fmt.Sprint(len(adds))})}
	for _, a := range adds {
		acts = append(acts, delta.Action{Add: a})
	}
	require.NoError(t, delta.Commit(t.Context(), tbl, s.Version+1, acts))
	return s.Version + 1
}

// DeleteRows commits a deletion vector on the live file add removing the
// rows at the given indexes, as a DELETE does, and returns the new version.
func DeleteRows(t testing.TB, tbl *delta.Table, add *delta.Add, rows ...uint64) int64 {
	t.Helper()
	dv, err := delta.InlineDeletionVector(roaring64.BitmapOf(rows...))
	require.NoError(t, err)
	withDV := *add
	withDV.DeletionVector = dv
	s := Snapshot(t, tbl)
	require.NoError(t, delta.Commit(t.Context(), tbl, s.Version+1, []delta.Action{
		delta.NewCommitInfo("DELETE", nil, s.Version, nil),
		{Remove: &delta.Remove{Path: add.Path, DataChange: true}}, {Add: &withDV}}))
	return s.Version + 1
}

// LiveRows counts the rows a read of the latest version returns.
func LiveRows(t testing.TB, tbl *delta.Table) int64 {
	t.Helper()
	s := Snapshot(t, tbl)
	var n int64
	require.NoError(t, tbl.Read(t.Context(), s, delta.ReadOptions{}, func(_ *delta.Add, rec arrow.RecordBatch) error {
		n += rec.NumRows()
		return nil
	}))
	return n
}
