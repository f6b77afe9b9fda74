package deltatable

import (
	"fmt"
	"strings"
	"time"

	"github.com/apache/iceberg-go"

	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/engine/where"
)

// scope returns the files whose partition values satisfy text, a
// predicate in engine/where's language over the table's partition
// columns only: as Delta's own OPTIMIZE WHERE, it selects whole
// partitions, so a file is rewritten whole or not at all.
func (f *format) scope(files []engine.PlanFile, text string) ([]engine.PlanFile, error) {
	sc, types, err := f.partitionSchema()
	if err != nil {
		return nil, err
	}
	expr, err := where.Parse(text, sc)
	if err != nil {
		return nil, fmt.Errorf("%w: --where on Delta table %s names its partition columns only (%s), as Delta's OPTIMIZE WHERE does: %w",
			engine.ErrOption, f.name, strings.Join(f.snap.Metadata.PartitionColumns, ", "), err)
	}
	match, err := iceberg.ExpressionEvaluator(sc, expr, false)
	if err != nil {
		return nil, fmt.Errorf("%w: --where %q: %w", engine.ErrOption, text, err)
	}
	var out []engine.PlanFile
	for _, pf := range files {
		row, err := f.partitionRow(add(pf), types)
		if err != nil {
			return nil, err
		}
		ok, err := match(row)
		if err != nil {
			return nil, fmt.Errorf("--where on %s: %w", pf.Path, err)
		}
		if ok {
			out = append(out, pf)
		}
	}
	return out, nil
}

// partitionSchema is the table's partition columns as an Iceberg schema
// (the types where.Parse and Iceberg's evaluator know), with their Delta
// type names.
func (f *format) partitionSchema() (*iceberg.Schema, []string, error) {
	parts := f.snap.Metadata.PartitionColumns
	if len(parts) == 0 {
		return nil, nil, fmt.Errorf("%w: --where on Delta table %s: the table is not partitioned, and a Delta rewrite is scoped by partitions only; rewrite it whole",
			engine.ErrOption, f.name)
	}
	fields := make([]iceberg.NestedField, len(parts))
	types := make([]string, len(parts))
	for i, name := range parts {
		fl := f.snap.Schema.Field(name)
		pt, ok := fl.Type.(*delta.PrimitiveType)
		var typ iceberg.Type
		if ok {
			typ = icebergTypes[pt.Name]
		}
		if typ == nil {
			return nil, nil, fmt.Errorf("%w: --where on Delta table %s: partition column %s has a type --where cannot compare", engine.ErrOption, f.name, name)
		}
		fields[i] = iceberg.NestedField{ID: i + 1, Name: name, Type: typ}
		types[i] = pt.Name
	}
	return iceberg.NewSchema(0, fields...), types, nil
}

// icebergTypes are the Iceberg types of the Delta partition column types
// --where compares.
var icebergTypes = map[string]iceberg.Type{
	"string": iceberg.PrimitiveTypes.String, "boolean": iceberg.PrimitiveTypes.Bool,
	"byte": iceberg.PrimitiveTypes.Int32, "short": iceberg.PrimitiveTypes.Int32, "integer": iceberg.PrimitiveTypes.Int32,
	"long": iceberg.PrimitiveTypes.Int64, "float": iceberg.PrimitiveTypes.Float32, "double": iceberg.PrimitiveTypes.Float64,
	"date": iceberg.PrimitiveTypes.Date, "timestamp": iceberg.PrimitiveTypes.TimestampTz, "timestamp_ntz": iceberg.PrimitiveTypes.Timestamp,
}

// partitionRow is a file's partition values in the Go types Iceberg's
// evaluator compares.
func (f *format) partitionRow(a *delta.Add, types []string) (structRow, error) {
	mode := f.snap.ColumnMapping()
	row := make(structRow, len(types))
	for i, name := range f.snap.Metadata.PartitionColumns {
		fl := f.snap.Schema.Field(name)
		v, err := delta.ParsePartitionValue(a.PartitionValues[fl.PhysicalName(mode)], fl.Type)
		if err != nil {
			return nil, err
		}
		row[i] = icebergValue(v, types[i])
	}
	return row, nil
}

// icebergValue converts a parsed Delta partition value of Delta type typ.
func icebergValue(v delta.PartitionValue, typ string) any {
	switch v := v.(type) {
	case int8:
		return int32(v)
	case int16:
		return int32(v)
	case time.Time:
		if typ == "date" {
			return iceberg.Date(v.Unix() / 86400)
		}
		return iceberg.Timestamp(v.UnixMicro())
	}
	return v
}

// structRow is a row for Iceberg's expression evaluator.
type structRow []any

func (r structRow) Size() int        { return len(r) }
func (r structRow) Get(i int) any    { return r[i] }
func (r structRow) Set(i int, v any) { r[i] = v }
