package delta

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
)

// DataType is a Delta column type: *PrimitiveType, *DecimalType, *StructType,
// *ArrayType or *MapType.
type DataType interface {
	typeName() string
}

// PrimitiveType is a type named by a string in the schema: string, long,
// integer, short, byte, float, double, boolean, binary, date, timestamp,
// timestamp_ntz (and variant or void, which readers may not support).
type PrimitiveType struct{ Name string }

// DecimalType is decimal(precision, scale).
type DecimalType struct{ Precision, Scale int32 }

// StructType is a struct, and also the table schema.
type StructType struct {
	Fields []*StructField
}

// StructField is a column; Metadata holds column mapping ids and names.
type StructField struct {
	Name     string
	Type     DataType
	Nullable bool
	Metadata map[string]any
}

// ArrayType is a list of elements.
type ArrayType struct {
	ElementType  DataType
	ContainsNull bool
}

// MapType is a map of keys to values.
type MapType struct {
	KeyType           DataType
	ValueType         DataType
	ValueContainsNull bool
}

func (t *PrimitiveType) typeName() string { return t.Name }
func (t *DecimalType) typeName() string {
	return fmt.Sprintf("decimal(%d,%d)", t.Precision, t.Scale)
}
func (t *StructType) typeName() string { return "struct" }
func (t *ArrayType) typeName() string  { return "array" }
func (t *MapType) typeName() string    { return "map" }

// Field returns the field with the given (logical) name, or nil.
func (t *StructType) Field(name string) *StructField {
	for _, f := range t.Fields {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// parseSchema parses a metaData schemaString.
func parseSchema(s string) (*StructType, error) {
	if s == "" {
		return nil, fmt.Errorf("parse schema: empty schemaString")
	}
	var raw json.RawMessage = []byte(s)
	t, err := parseType(raw)
	if err != nil {
		return nil, fmt.Errorf("parse schema: %w", err)
	}
	st, ok := t.(*StructType)
	if !ok {
		return nil, fmt.Errorf("parse schema: top level is %s, want struct", t.typeName())
	}
	return st, nil
}

var decimalRe = regexp.MustCompile(`^decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)$`)

var primitiveNames = map[string]bool{
	"string": true, "long": true, "integer": true, "short": true, "byte": true,
	"float": true, "double": true, "boolean": true, "binary": true, "date": true,
	"timestamp": true, "timestamp_ntz": true, "variant": true, "void": true,
}

type rawType struct {
	Type              string          `json:"type"`
	Fields            []rawField      `json:"fields"`
	ElementType       json.RawMessage `json:"elementType"`
	ContainsNull      bool            `json:"containsNull"`
	KeyType           json.RawMessage `json:"keyType"`
	ValueType         json.RawMessage `json:"valueType"`
	ValueContainsNull bool            `json:"valueContainsNull"`
}

type rawField struct {
	Name     string          `json:"name"`
	Type     json.RawMessage `json:"type"`
	Nullable bool            `json:"nullable"`
	Metadata map[string]any  `json:"metadata"`
}

func parseType(raw json.RawMessage) (DataType, error) {
	var name string
	if err := json.Unmarshal(raw, &name); err == nil {
		return parsePrimitive(name)
	}
	var rt rawType
	if err := json.Unmarshal(raw, &rt); err != nil {
		return nil, err
	}
	switch rt.Type {
	case "struct":
		st := &StructType{Fields: make([]*StructField, 0, len(rt.Fields))}
		for _, f := range rt.Fields {
			t, err := parseType(f.Type)
			if err != nil {
				return nil, fmt.Errorf("field %q: %w", f.Name, err)
			}
			st.Fields = append(st.Fields, &StructField{Name: f.Name, Type: t, Nullable: f.Nullable, Metadata: f.Metadata})
		}
		return st, nil
	case "array":
		et, err := parseType(rt.ElementType)
		if err != nil {
			return nil, fmt.Errorf("array element: %w", err)
		}
		return &ArrayType{ElementType: et, ContainsNull: rt.ContainsNull}, nil
	case "map":
		kt, err := parseType(rt.KeyType)
		if err != nil {
			return nil, fmt.Errorf("map key: %w", err)
		}
		vt, err := parseType(rt.ValueType)
		if err != nil {
			return nil, fmt.Errorf("map value: %w", err)
		}
		return &MapType{KeyType: kt, ValueType: vt, ValueContainsNull: rt.ValueContainsNull}, nil
	}
	return nil, fmt.Errorf("unknown type %q", rt.Type)
}

func parsePrimitive(name string) (DataType, error) {
	if m := decimalRe.FindStringSubmatch(name); m != nil {
		p, _ := strconv.Atoi(m[1])
		s, _ := strconv.Atoi(m[2])
		if p < 1 || p > 38 || s > p {
			return nil, fmt.Errorf("invalid %s: precision 1..38 and scale <= precision", name)
		}
		return &DecimalType{Precision: int32(p), Scale: int32(s)}, nil
	}
	if name == "decimal" {
		return &DecimalType{Precision: 10, Scale: 0}, nil
	}
	if !primitiveNames[name] {
		return nil, fmt.Errorf("unknown type %q", name)
	}
	return &PrimitiveType{Name: name}, nil
}

// MarshalJSON writes the schema in Delta's schemaString form.
func (t *StructType) MarshalJSON() ([]byte, error) { return json.Marshal(typeJSON(t)) }

func typeJSON(t DataType) any {
	switch t := t.(type) {
	case *StructType:
		fields := make([]map[string]any, len(t.Fields))
		for i, f := range t.Fields {
			md := f.Metadata
			if md == nil {
				md = map[string]any{}
			}
			fields[i] = map[string]any{"name": f.Name, "type": typeJSON(f.Type), "nullable": f.Nullable, "metadata": md}
		}
		return map[string]any{"type": "struct", "fields": fields}
	case *ArrayType:
		return map[string]any{"type": "array", "elementType": typeJSON(t.ElementType), "containsNull": t.ContainsNull}
	case *MapType:
		return map[string]any{"type": "map", "keyType": typeJSON(t.KeyType), "valueType": typeJSON(t.ValueType),
			"valueContainsNull": t.ValueContainsNull}
	}
	return t.typeName()
}
