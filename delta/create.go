package delta

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/google/uuid"
)

// ErrPartitionColumn marks partition columns a table cannot have.
var ErrPartitionColumn = errors.New("delta: bad partition column")

// TableSpec describes a table to create.
type TableSpec struct {
	// Name is the table's optional name in its metadata.
	Name string
	// Schema is the table's logical schema (see SchemaFromArrow).
	Schema *StructType
	// PartitionColumns are top-level primitive columns of Schema whose
	// values go into the log rather than the data files; not all columns.
	PartitionColumns []string
	// Configuration holds the table properties.
	Configuration map[string]string
}

// CreateActions returns the protocol and metaData actions that make a new
// table of spec, to be committed as version 0 (with a commitInfo and, for a
// table created with data, its add actions). The protocol is the lowest
// that holds the schema: reader 1 and writer 2, or reader 3 and writer 7
// with the timestampNtz feature when a column is timestamp_ntz. No column
// mapping is used: physical names are the logical names.
func CreateActions(spec TableSpec, now time.Time) ([]Action, error) {
	if spec.Schema == nil || len(spec.Schema.Fields) == 0 {
		return nil, fmt.Errorf("create table: the schema has no columns")
	}
	if err := checkPartitionColumns(spec.Schema, spec.PartitionColumns); err != nil {
		return nil, fmt.Errorf("create table: %w: %w", ErrPartitionColumn, err)
	}
	schema, err := spec.Schema.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("create table: %w", err)
	}
	proto := &Protocol{MinReaderVersion: 1, MinWriterVersion: 2}
	if usesType(spec.Schema, "timestamp_ntz") {
		proto = &Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
			ReaderFeatures: []string{"timestampNtz"}, WriterFeatures: []string{"timestampNtz"}}
	}
	conf := map[string]string{}
	for k, v := range spec.Configuration {
		conf[k] = v
	}
	created := now.UnixMilli()
	md := &Metadata{
		ID: uuid.NewString(), Name: spec.Name, Format: Format{Provider: "parquet", Options: map[string]string{}},
		SchemaString: string(schema), PartitionColumns: append([]string{}, spec.PartitionColumns...),
		Configuration: conf, CreatedTime: &created,
	}
	return []Action{{Protocol: proto}, {MetaData: md}}, nil
}

func checkPartitionColumns(s *StructType, cols []string) error {
	for i, c := range cols {
		f := s.Field(c)
		if f == nil {
			return fmt.Errorf("partition column %q is not in the schema (columns: %s)", c, fieldList(s))
		}
		if slices.Contains(cols[:i], c) {
			return fmt.Errorf("partition column %q is named twice", c)
		}
		switch t := f.Type.(type) {
		case *DecimalType:
		case *PrimitiveType:
			if t.Name == "binary" || t.Name == "variant" || t.Name == "void" {
				return fmt.Errorf("partition column %q has type %s, which cannot partition a table", c, t.Name)
			}
		default:
			return fmt.Errorf("partition column %q has type %s; only primitive columns can partition a table", c, f.Type.typeName())
		}
	}
	if len(cols) > 0 && len(cols) >= len(s.Fields) {
		return fmt.Errorf("every column is a partition column; leave at least one for the data files")
	}
	return nil
}

func fieldList(s *StructType) string {
	names := make([]string, len(s.Fields))
	for i, f := range s.Fields {
		names[i] = f.Name
	}
	return fmt.Sprint(names)
}

func usesType(t DataType, name string) bool {
	switch t := t.(type) {
	case *StructType:
		return slices.ContainsFunc(t.Fields, func(f *StructField) bool { return usesType(f.Type, name) })
	case *ArrayType:
		return usesType(t.ElementType, name)
	case *MapType:
		return usesType(t.KeyType, name) || usesType(t.ValueType, name)
	case *PrimitiveType:
		return t.Name == name
	}
	return false
}

// SnapshotOf returns the snapshot that actions (a protocol and a metaData,
// as CreateActions gives) make as version 0 of a table not yet committed,
// so data files can be written for it (Table.NewFileWriter) before the
// commit that creates the table.
func SnapshotOf(actions []Action) (*Snapshot, error) {
	r := newReplay(Root{})
	if err := r.apply(actions, true); err != nil {
		return nil, err
	}
	return r.snapshot(0, nil)
}

// SchemaFromArrow returns the Delta schema of an Arrow schema, the inverse
// of arrowType for the types reads produce. Types Delta lacks widen where
// no value changes: unsigned 8- and 16-bit integers become integer, uint32
// long, large strings and binaries their plain forms, timestamps of any
// unit timestamp (with a zone) or timestamp_ntz (without); an extension
// type is its storage type. Other types (uint64, float16, intervals,
// unions, ...) are refused naming the column.
func SchemaFromArrow(sc *arrow.Schema) (*StructType, error) {
	st, err := structFromArrow(sc.Fields())
	if err != nil {
		return nil, fmt.Errorf("delta schema: %w", err)
	}
	return st, nil
}

func structFromArrow(fields []arrow.Field) (*StructType, error) {
	st := &StructType{Fields: make([]*StructField, len(fields))}
	for i, f := range fields {
		t, err := typeFromArrow(f.Type)
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", f.Name, err)
		}
		st.Fields[i] = &StructField{Name: f.Name, Type: t, Nullable: f.Nullable, Metadata: map[string]any{}}
	}
	return st, nil
}

var arrowPrimitive = map[arrow.Type]string{
	arrow.BOOL: "boolean", arrow.INT8: "byte", arrow.INT16: "short", arrow.INT32: "integer", arrow.INT64: "long",
	arrow.UINT8: "integer", arrow.UINT16: "integer", arrow.UINT32: "long",
	arrow.FLOAT32: "float", arrow.FLOAT64: "double", arrow.STRING: "string", arrow.LARGE_STRING: "string",
	arrow.BINARY: "binary", arrow.LARGE_BINARY: "binary", arrow.DATE32: "date",
}

func typeFromArrow(dt arrow.DataType) (DataType, error) {
	switch t := dt.(type) {
	case arrow.ExtensionType:
		return typeFromArrow(t.StorageType())
	case *arrow.TimestampType:
		if t.TimeZone == "" {
			return &PrimitiveType{Name: "timestamp_ntz"}, nil
		}
		return &PrimitiveType{Name: "timestamp"}, nil
	case *arrow.Decimal128Type:
		return &DecimalType{Precision: t.Precision, Scale: t.Scale}, nil
	case *arrow.StructType:
		return structFromArrow(t.Fields())
	case *arrow.MapType:
		kt, err := typeFromArrow(t.KeyType())
		if err != nil {
			return nil, fmt.Errorf("map key: %w", err)
		}
		vt, err := typeFromArrow(t.ItemType())
		if err != nil {
			return nil, fmt.Errorf("map value: %w", err)
		}
		return &MapType{KeyType: kt, ValueType: vt, ValueContainsNull: t.ItemField().Nullable}, nil
	case arrow.ListLikeType:
		if dt.ID() != arrow.LIST && dt.ID() != arrow.LARGE_LIST {
			break
		}
		et, err := typeFromArrow(t.Elem())
		if err != nil {
			return nil, fmt.Errorf("list element: %w", err)
		}
		return &ArrayType{ElementType: et, ContainsNull: t.ElemField().Nullable}, nil
	}
	if name, ok := arrowPrimitive[dt.ID()]; ok {
		return &PrimitiveType{Name: name}, nil
	}
	return nil, fmt.Errorf("type %s has no Delta equivalent", dt)
}
