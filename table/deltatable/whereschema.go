package deltatable

import (
	"slices"

	"github.com/apache/iceberg-go"

	"github.com/geocompact/geocompact/delta"
)

// whereColumn is a column --where may compare, as a file's statistics
// describe it.
type whereColumn struct {
	// field is the column; typ its Delta type (a primitive or decimal).
	field *delta.StructField
	typ   delta.DataType
	// physical is its path in the stats' minValues, maxValues and
	// nullCount maps: physical names under column mapping.
	physical []string
	// partition marks a partition column: its value is the add action's
	// partition value, and the stats do not hold it.
	partition bool
	// geometry marks the table's geometry column, whose bbox(…) test
	// uses the file's bound from its bbox column statistics.
	geometry bool
}

// whereSchema is every column of the table as an Iceberg schema, the
// types where.Parse resolves and types literals by, nested structs
// included, with what each leaf's field id stands for. Columns of a type
// no statistics describe (binary, arrays, maps) are in the schema, so
// that --where names them in its errors, but not among the columns.
func (f *format) whereSchema() (*iceberg.Schema, map[int]*whereColumn) {
	b := &schemaBuilder{mode: f.snap.ColumnMapping(), cols: map[int]*whereColumn{}, parts: map[string]bool{}}
	if f.colsErr == nil {
		b.geometry = f.cols.Geometry
	}
	for _, p := range f.snap.Metadata.PartitionColumns {
		b.parts[p] = true
	}
	fields := b.fields(f.snap.Schema, nil, true)
	return iceberg.NewSchema(0, fields...), b.cols
}

// schemaBuilder numbers fields as it converts a Delta schema.
type schemaBuilder struct {
	mode     delta.ColumnMapping
	geometry string
	parts    map[string]bool
	next     int
	cols     map[int]*whereColumn
}

// fields converts st's fields, whose stats paths start with path (nil at
// the top level, top true there).
func (b *schemaBuilder) fields(st *delta.StructType, path []string, top bool) []iceberg.NestedField {
	out := make([]iceberg.NestedField, 0, len(st.Fields))
	for _, fl := range st.Fields {
		b.next++
		id := b.next
		phys := append(slices.Clone(path), fl.PhysicalName(b.mode))
		var typ iceberg.Type
		if top && fl.Name == b.geometry && isBinary(fl.Type) {
			typ = iceberg.GeometryType{}
			b.cols[id] = &whereColumn{field: fl, typ: fl.Type, physical: phys, geometry: true}
		} else if typ = b.typ(fl.Type, phys); typ == nil {
			continue // a type --where has no name for (variant, void)
		}
		if icebergLeaf(typ) {
			b.cols[id] = &whereColumn{field: fl, typ: fl.Type, physical: phys, partition: top && b.parts[fl.Name]}
		}
		out = append(out, iceberg.NestedField{ID: id, Name: fl.Name, Type: typ})
	}
	return out
}

// typ converts a Delta type, nil for one Iceberg has no type for.
func (b *schemaBuilder) typ(dt delta.DataType, phys []string) iceberg.Type {
	switch t := dt.(type) {
	case *delta.StructType:
		return &iceberg.StructType{FieldList: b.fields(t, phys, false)}
	case *delta.ArrayType:
		b.next++
		id := b.next
		elem := b.typ(t.ElementType, nil)
		if elem == nil {
			return nil
		}
		return &iceberg.ListType{ElementID: id, Element: elem, ElementRequired: !t.ContainsNull}
	case *delta.MapType:
		b.next += 2
		kid, vid := b.next-1, b.next
		k, v := b.typ(t.KeyType, nil), b.typ(t.ValueType, nil)
		if k == nil || v == nil {
			return nil
		}
		return &iceberg.MapType{KeyID: kid, KeyType: k, ValueID: vid, ValueType: v, ValueRequired: !t.ValueContainsNull}
	case *delta.DecimalType:
		return iceberg.DecimalTypeOf(int(t.Precision), int(t.Scale))
	case *delta.PrimitiveType:
		if t.Name == "binary" {
			return iceberg.PrimitiveTypes.Binary
		}
		return icebergTypes[t.Name]
	}
	return nil
}

// icebergLeaf reports whether typ is a type statistics can bound.
func icebergLeaf(typ iceberg.Type) bool {
	switch typ.(type) {
	case *iceberg.StructType, *iceberg.ListType, *iceberg.MapType, iceberg.BinaryType, iceberg.GeometryType:
		return false
	}
	return true
}

func isBinary(t delta.DataType) bool {
	p, ok := t.(*delta.PrimitiveType)
	return ok && p.Name == "binary"
}
