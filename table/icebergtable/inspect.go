package icebergtable

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"

	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/spatial/icebergspatial"
	format "github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/catalogs"
)

// MetadataTables are the metadata tables an Iceberg table has, by
// Iceberg's names, in help order.
var MetadataTables = []string{"files", "snapshots", "manifests", "partitions", "history"}

// MetadataRows reads the metadata table of t's table called name
// (iceberg-go's Table.Inspect) into rows.
//
// The files table is made readable: its per-column maps (column_sizes,
// value_counts, null_value_counts, nan_value_counts, lower_bounds,
// upper_bounds) are keyed by column name instead of field id, bounds are
// decoded by the column's type (a v3 geometry bound becomes {"x":..,"y":..}),
// and each row gains a "bbox" column: the file's bounding box from the bbox
// columns' or the geometry column's bounds (see icebergspatial.FileBound), or null.
func (t *Table) MetadataRows(ctx context.Context, name string) ([]format.Row, error) {
	tbl, kind := t.Table, name
	it := tbl.Inspect()
	var (
		rdr array.RecordReader
		err error
	)
	switch kind {
	case "files":
		rdr, err = it.Files(ctx)
	case "snapshots":
		rdr, err = it.Snapshots(ctx)
	case "manifests":
		rdr, err = it.Manifests(ctx)
	case "partitions":
		rdr, err = it.Partitions(ctx)
	case "history":
		rdr, err = it.History(ctx)
	default:
		return nil, fmt.Errorf("%w %q, want one of %s", format.ErrMetadataTable, name, strings.Join(MetadataTables, ", "))
	}
	if err != nil {
		return nil, fmt.Errorf("inspect %s of %s: %w", kind, catalogs.TableName(tbl), err)
	}
	defer rdr.Release()
	// A table without a geometry column may still have bbox columns.
	cols, _ := icebergspatial.Columns(tbl.Schema(), tbl.Properties(), "")
	conv := &rowConverter{schema: tbl.Schema(), cols: cols, files: kind == "files"}
	rows := []format.Row{}
	for rdr.Next() {
		rec := rdr.RecordBatch()
		for i := range int(rec.NumRows()) {
			rows = append(rows, conv.row(rec, i))
		}
	}
	if err := rdr.Err(); err != nil {
		return nil, fmt.Errorf("inspect %s of %s: %w", kind, catalogs.TableName(tbl), err)
	}
	return rows, nil
}

// rowConverter turns Arrow rows of a metadata table into Rows.
type rowConverter struct {
	schema *iceberg.Schema
	cols   spatial.Columns // for the files table's bbox
	files  bool
}

// fieldIDMaps are the files table's maps keyed by field id.
var fieldIDMaps = map[string]bool{
	"column_sizes": true, "value_counts": true, "null_value_counts": true,
	"nan_value_counts": true, "lower_bounds": true, "upper_bounds": true,
}

func (c *rowConverter) row(rec arrow.RecordBatch, i int) format.Row {
	r := make(format.Row, 0, rec.NumCols()+1)
	var lower, upper map[int][]byte
	for j, col := range rec.Columns() {
		name := rec.ColumnName(j)
		var v any
		if m, ok := col.(*array.Map); ok && c.files && fieldIDMaps[name] {
			var raw map[int][]byte
			v, raw = c.fieldIDMap(m, i, strings.HasSuffix(name, "_bounds"))
			switch name {
			case "lower_bounds":
				lower = raw
			case "upper_bounds":
				upper = raw
			}
		} else {
			v = value(col, i)
		}
		r = append(r, format.Field{Key: name, Value: v})
	}
	if c.files {
		var bbox any
		if b, ok := icebergspatial.FileBound(c.schema, c.cols, lower, upper); ok {
			bbox = b
		}
		r = append(r, format.Field{Key: "bbox", Value: bbox})
	}
	return r
}

// fieldIDMap renders a map keyed by field id as an object keyed by column
// name; bounds are decoded by the column's type. It also returns the raw
// map, for icebergspatial.FileBound.
func (c *rowConverter) fieldIDMap(m *array.Map, i int, bounds bool) (any, map[int][]byte) {
	if m.IsNull(i) {
		return nil, nil
	}
	start, end := m.ValueOffsets(i)
	keys, items := m.Keys(), m.Items()
	out := make(map[string]any, end-start)
	raw := map[int][]byte{}
	for k := start; k < end; k++ {
		id := int(asInt64(value(keys, int(k))))
		name := strconv.Itoa(id)
		f, known := c.schema.FindFieldByID(id)
		if known {
			name = f.Name
		}
		if !bounds {
			out[name] = value(items, int(k))
			continue
		}
		b, _ := value(items, int(k)).([]byte)
		raw[id] = b
		if known {
			out[name] = DecodeBound(f.Type, b)
		} else {
			out[name] = hex.EncodeToString(b)
		}
	}
	return out, raw
}

func asInt64(v any) int64 {
	switch n := v.(type) {
	case int32:
		return int64(n)
	case int64:
		return n
	}
	return -1
}

// value converts one Arrow value to the Go values format.Row documents.
func value(col arrow.Array, i int) any {
	if col.IsNull(i) {
		return nil
	}
	switch a := col.(type) {
	case *array.Boolean:
		return a.Value(i)
	case *array.Int32:
		return a.Value(i)
	case *array.Int64:
		return a.Value(i)
	case *array.Float32:
		return float64(a.Value(i))
	case *array.Float64:
		return a.Value(i)
	case *array.String:
		return a.Value(i)
	case *array.LargeString:
		return a.Value(i)
	case *array.Binary:
		return bytes.Clone(a.Value(i))
	case *array.Timestamp:
		unit := a.DataType().(*arrow.TimestampType).Unit
		return a.Value(i).ToTime(unit).UTC()
	case *array.Date32:
		return a.Value(i).FormattedString()
	case *array.Map:
		start, end := a.ValueOffsets(i)
		out := make(map[string]any, end-start)
		for k := start; k < end; k++ {
			out[fmt.Sprint(value(a.Keys(), int(k)))] = value(a.Items(), int(k))
		}
		return out
	case *array.List:
		start, end := a.ValueOffsets(i)
		out := make([]any, 0, end-start)
		for k := start; k < end; k++ {
			out = append(out, value(a.ListValues(), int(k)))
		}
		return out
	case *array.Struct:
		st := a.DataType().(*arrow.StructType)
		out := make(format.Row, a.NumField())
		for f := range a.NumField() {
			out[f] = format.Field{Key: st.Field(f).Name, Value: value(a.Field(f), i)}
		}
		return out
	}
	return col.GetOneForMarshal(i)
}

// DecodeBound decodes a lower or upper bound as stored in manifests (the
// Iceberg single-value binary serialisation) into a readable value: a
// number for numeric columns, a string for dates ("2026-01-02"), timestamps
// (RFC 3339, UTC) and strings, a {"x","y"[,"z"][,"m"]} object for geometry
// and geography, and hex for anything else or anything malformed.
func DecodeBound(typ iceberg.Type, b []byte) any {
	switch typ.(type) {
	case iceberg.Int32Type:
		if len(b) == 4 {
			return int32(binary.LittleEndian.Uint32(b))
		}
	case iceberg.Int64Type:
		if len(b) == 8 {
			return int64(binary.LittleEndian.Uint64(b))
		}
	case iceberg.Float32Type:
		if len(b) == 4 {
			return float64(math.Float32frombits(binary.LittleEndian.Uint32(b)))
		}
	case iceberg.Float64Type:
		if len(b) == 8 {
			return math.Float64frombits(binary.LittleEndian.Uint64(b))
		}
	case iceberg.DateType:
		if len(b) == 4 {
			return time.Unix(int64(int32(binary.LittleEndian.Uint32(b)))*86400, 0).UTC().Format(time.DateOnly)
		}
	case iceberg.TimestampType, iceberg.TimestampTzType:
		if len(b) == 8 {
			return time.UnixMicro(int64(binary.LittleEndian.Uint64(b))).UTC()
		}
	case iceberg.StringType:
		return string(b)
	case iceberg.BooleanType:
		if len(b) == 1 {
			return b[0] != 0
		}
	case iceberg.GeometryType, iceberg.GeographyType:
		if p, ok := spatial.DecodeGeoPoint(b); ok {
			out := map[string]any{"x": p[0], "y": p[1]}
			switch len(b) {
			case 24:
				out["z"] = p[2] // XYZ; XYM bounds are written with a NaN Z
			case 32:
				out["z"], out["m"] = p[2], p[3]
			}
			return out
		}
	}
	switch typ.(type) {
	case iceberg.BinaryType, iceberg.FixedType, iceberg.GeometryType, iceberg.GeographyType:
		return hex.EncodeToString(b)
	}
	if lit, err := iceberg.LiteralFromBytes(typ, b); err == nil {
		return lit.String() // decimal, uuid, time, ...
	}
	return hex.EncodeToString(b)
}
