package delta

import (
	"fmt"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
)

// ColumnMapping is a table's column mapping mode.
type ColumnMapping string

// Column mapping modes.
const (
	MappingNone ColumnMapping = "none"
	MappingName ColumnMapping = "name"
	MappingID   ColumnMapping = "id"
)

// Column metadata keys of column mapping.
const (
	physicalNameKey = "delta.columnMapping.physicalName"
	fieldIDKey      = "delta.columnMapping.id"
	parquetIDKey    = "PARQUET:field_id"
)

// ColumnMapping returns the mode in force: the table property counts only
// when the protocol supports column mapping.
func (s *Snapshot) ColumnMapping() ColumnMapping {
	mode := ColumnMapping(s.Config("delta.columnMapping.mode", "none"))
	if mode == MappingNone || !s.Protocol.HasReaderFeature("columnMapping") && !s.Protocol.HasWriterFeature("columnMapping") {
		return MappingNone
	}
	return mode
}

// PhysicalName is the column's name in data files, partition values and
// stats under mode.
func (f *StructField) PhysicalName(mode ColumnMapping) string {
	if mode == MappingNone {
		return f.Name
	}
	if p, ok := f.Metadata[physicalNameKey].(string); ok && p != "" {
		return p
	}
	return f.Name
}

// FieldID is the column mapping id of the column.
func (f *StructField) FieldID() (int, bool) {
	switch v := f.Metadata[fieldIDKey].(type) {
	case float64:
		return int(v), true
	case string:
		n, err := strconv.Atoi(v)
		return n, err == nil
	}
	return 0, false
}

// matchField finds the file column for the table field f among fields:
// by field id in id mode, by physical name otherwise.
func matchField(f *StructField, mode ColumnMapping, fields []arrow.Field) int {
	if mode == MappingID {
		id, ok := f.FieldID()
		if !ok {
			return -1
		}
		for i, af := range fields {
			if v, found := af.Metadata.GetValue(parquetIDKey); found && v == strconv.Itoa(id) {
				return i
			}
		}
		return -1
	}
	name := f.PhysicalName(mode)
	for i, af := range fields {
		if af.Name == name {
			return i
		}
	}
	return -1
}

// arrowType maps a Delta type to the Arrow type reads produce.
func arrowType(t DataType) (arrow.DataType, error) {
	switch t := t.(type) {
	case *DecimalType:
		return &arrow.Decimal128Type{Precision: t.Precision, Scale: t.Scale}, nil
	case *StructType:
		fields, err := arrowFields(t)
		if err != nil {
			return nil, err
		}
		return arrow.StructOf(fields...), nil
	case *ArrayType:
		et, err := arrowType(t.ElementType)
		if err != nil {
			return nil, err
		}
		return arrow.ListOfField(arrow.Field{Name: "element", Type: et, Nullable: t.ContainsNull}), nil
	case *MapType:
		kt, err := arrowType(t.KeyType)
		if err != nil {
			return nil, err
		}
		vt, err := arrowType(t.ValueType)
		if err != nil {
			return nil, err
		}
		mt := arrow.MapOf(kt, vt)
		mt.SetItemNullable(t.ValueContainsNull)
		return mt, nil
	case *PrimitiveType:
		if at, ok := primitiveArrow[t.Name]; ok {
			return at, nil
		}
	}
	return nil, fmt.Errorf("delta: type %s cannot be read", t.typeName())
}

var primitiveArrow = map[string]arrow.DataType{
	"string":        arrow.BinaryTypes.String,
	"binary":        arrow.BinaryTypes.Binary,
	"boolean":       arrow.FixedWidthTypes.Boolean,
	"byte":          arrow.PrimitiveTypes.Int8,
	"short":         arrow.PrimitiveTypes.Int16,
	"integer":       arrow.PrimitiveTypes.Int32,
	"long":          arrow.PrimitiveTypes.Int64,
	"float":         arrow.PrimitiveTypes.Float32,
	"double":        arrow.PrimitiveTypes.Float64,
	"date":          arrow.FixedWidthTypes.Date32,
	"timestamp":     &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"},
	"timestamp_ntz": &arrow.TimestampType{Unit: arrow.Microsecond},
}

func arrowFields(t *StructType) ([]arrow.Field, error) {
	out := make([]arrow.Field, len(t.Fields))
	for i, f := range t.Fields {
		at, err := arrowType(f.Type)
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", f.Name, err)
		}
		out[i] = arrow.Field{Name: f.Name, Type: at, Nullable: f.Nullable}
	}
	return out, nil
}

// ArrowSchema is the schema of the batches Read produces: the table's
// logical columns in table order, partition columns included.
func (s *Snapshot) ArrowSchema() (*arrow.Schema, error) {
	fields, err := arrowFields(s.Schema)
	if err != nil {
		return nil, err
	}
	return arrow.NewSchema(fields, nil), nil
}
