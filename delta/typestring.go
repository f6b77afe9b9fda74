package delta

import "strings"

// TypeString spells a Delta type as Spark SQL does: "long",
// "decimal(10,2)", "array<string>", "map<string,long>",
// "struct<xmin:double,ymin:double>".
func TypeString(t DataType) string {
	switch t := t.(type) {
	case *StructType:
		parts := make([]string, len(t.Fields))
		for i, f := range t.Fields {
			parts[i] = f.Name + ":" + TypeString(f.Type)
		}
		return "struct<" + strings.Join(parts, ",") + ">"
	case *ArrayType:
		return "array<" + TypeString(t.ElementType) + ">"
	case *MapType:
		return "map<" + TypeString(t.KeyType) + "," + TypeString(t.ValueType) + ">"
	}
	return t.typeName()
}
