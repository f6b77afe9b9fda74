// Package inspect reads a table's Iceberg metadata tables (files,
// snapshots, manifests, partitions, history) as rows of named fields, for
// the inspect command and for Go programs that look into a table.
package inspect

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/spatial/icebergspatial"
	"github.com/geocompact/geocompact/table/catalogs"
)

// ErrKind is returned for a metadata table name Rows does not
// know.
var ErrKind = errors.New("inspect: unknown metadata table")

// Kind names one of Iceberg's metadata tables.
type Kind string

// The metadata tables Rows reads, by their Iceberg names.
const (
	Files      Kind = "files"
	Snapshots  Kind = "snapshots"
	Manifests  Kind = "manifests"
	Partitions Kind = "partitions"
	History    Kind = "history"
)

// Kinds lists the metadata tables Rows reads, in help order.
var Kinds = []Kind{Files, Snapshots, Manifests, Partitions, History}

// ParseKind checks a metadata table name.
func ParseKind(s string) (Kind, error) {
	k := Kind(strings.ToLower(s))
	if slices.Contains(Kinds, k) {
		return k, nil
	}
	names := make([]string, len(Kinds))
	for i, k := range Kinds {
		names[i] = string(k)
	}
	return "", fmt.Errorf("%w %q, want one of %s", ErrKind, s, strings.Join(names, ", "))
}

// Field is one named value of a Row.
type Field struct {
	Key   string
	Value any
}

// Row is one row of a metadata table: its columns in Iceberg's order, with
// snake_case names as in Iceberg's metadata tables. It marshals to a JSON
// object that keeps that order. Values are nil (null), bool, int32, int64,
// float64, string, time.Time (timestamps, in UTC), []any (lists), Row
// (structs, such as a file's partition), map[string]any (maps) and, for the
// files table's bbox column, spatial.Bound.
type Row []Field

// Get returns the value of the column named key, and whether it exists.
func (r Row) Get(key string) (any, bool) {
	for _, f := range r {
		if f.Key == key {
			return f.Value, true
		}
	}
	return nil, false
}

// MarshalJSON writes r as a JSON object in column order.
func (r Row) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range r {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.Key)
		b.Write(k)
		b.WriteByte(':')
		v, err := json.Marshal(f.Value)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", f.Key, err)
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Rows reads one of tbl's metadata tables (iceberg-go's Table.Inspect)
// into rows.
//
// The files table is made readable: its per-column maps (column_sizes,
// value_counts, null_value_counts, nan_value_counts, lower_bounds,
// upper_bounds) are keyed by column name instead of field id, bounds are
// decoded by the column's type (a v3 geometry bound becomes {"x":..,"y":..}),
// and each row gains a "bbox" column: the file's bounding box from the bbox
// columns' or the geometry column's bounds (see icebergspatial.FileBound), or null.
func Rows(ctx context.Context, tbl *table.Table, kind Kind) ([]Row, error) {
	it := tbl.Inspect()
	var (
		rdr array.RecordReader
		err error
	)
	switch kind {
	case Files:
		rdr, err = it.Files(ctx)
	case Snapshots:
		rdr, err = it.Snapshots(ctx)
	case Manifests:
		rdr, err = it.Manifests(ctx)
	case Partitions:
		rdr, err = it.Partitions(ctx)
	case History:
		rdr, err = it.History(ctx)
	default:
		_, err = ParseKind(string(kind))
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("inspect %s of %s: %w", kind, catalogs.TableName(tbl), err)
	}
	defer rdr.Release()
	// A table without a geometry column may still have bbox columns.
	cols, _ := icebergspatial.Columns(tbl.Schema(), tbl.Properties(), "")
	conv := &rowConverter{schema: tbl.Schema(), cols: cols, files: kind == Files}
	rows := []Row{}
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

func (c *rowConverter) row(rec arrow.RecordBatch, i int) Row {
	r := make(Row, 0, rec.NumCols()+1)
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
		r = append(r, Field{Key: name, Value: v})
	}
	if c.files {
		var bbox any
		if b, ok := icebergspatial.FileBound(c.schema, c.cols, lower, upper); ok {
			bbox = b
		}
		r = append(r, Field{Key: "bbox", Value: bbox})
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

// value converts one Arrow value to the Go values Row documents.
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
		out := make(Row, a.NumField())
		for f := range a.NumField() {
			out[f] = Field{Key: st.Field(f).Name, Value: value(a.Field(f), i)}
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
