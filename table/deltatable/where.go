package deltatable

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/apache/iceberg-go"

	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/internal/suggest"
	"github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/optval"
	"github.com/geocompact/geocompact/table/where"
)

// scope returns the files that may hold rows matching text, a predicate
// in table/where's language over any of the table's columns, as an
// Iceberg rewrite scopes by --where: a file is selected when its
// partition values and statistics (Delta's per-file minValues, maxValues,
// nullCount and numRecords) do not rule a match out, and a selected file
// is rewritten whole. A predicate on partition columns alone is decided
// exactly on the partition values, as Delta's own OPTIMIZE WHERE does.
func (f *format) scope(files []table.PlanFile, text string) ([]table.PlanFile, error) {
	now := time.Now()
	sc, cols := f.whereSchema()
	expr, err := where.ParseAt(text, sc, now)
	if err != nil {
		return nil, fmt.Errorf("%w: where predicate on Delta table %s: %w", optval.ErrBad, f.name, err)
	}
	if _, all := expr.(iceberg.AlwaysTrue); all {
		return files, nil // as an Iceberg rewrite scans unfiltered
	}
	if f.partitionsOnly(sc, expr, cols) {
		if out, err := f.scopePartitions(files, text, now); !errors.Is(err, errNoPartitionSchema) {
			return out, err
		}
	}
	return f.scopeMetrics(files, sc, expr, cols)
}

// partitionsOnly reports whether expr names partition columns and no
// others.
func (f *format) partitionsOnly(sc *iceberg.Schema, expr iceberg.BooleanExpression, cols map[int]*whereColumn) bool {
	bound, err := iceberg.BindExpr(sc, expr, true)
	if err != nil {
		return false
	}
	ids, err := iceberg.ExtractFieldIDs(bound)
	if err != nil || len(ids) == 0 {
		return false
	}
	for _, id := range ids {
		if c := cols[id]; c == nil || !c.partition {
			return false
		}
	}
	return true
}

// scopeMetrics returns the files whose statistics do not rule out a row
// matching expr: inclusive, so a file without statistics for a column
// the predicate names is selected.
func (f *format) scopeMetrics(files []table.PlanFile, sc *iceberg.Schema, expr iceberg.BooleanExpression, cols map[int]*whereColumn) ([]table.PlanFile, error) {
	rewritten, err := iceberg.RewriteNotExpr(expr)
	if err != nil {
		return nil, fmt.Errorf("where predicate on Delta table %s: %w", f.name, err)
	}
	bound, err := iceberg.BindExpr(sc, rewritten, true)
	if err != nil {
		return nil, fmt.Errorf("%w: where predicate on Delta table %s: %w", optval.ErrBad, f.name, err)
	}
	mode := f.snap.ColumnMapping()
	var out []table.PlanFile
	for _, pf := range files {
		m := &fileMetrics{cols: cols, mode: mode, file: pf, records: -1}
		if m.stats, err = add(pf).ParsedStats(); err != nil {
			return nil, fmt.Errorf("stats of %s: %w", pf.Path, err)
		}
		if m.stats != nil && strings.Contains(add(pf).Stats, `"numRecords"`) {
			if m.records = m.stats.NumRecords; m.records == 0 {
				continue // an empty file holds no matching row
			}
		}
		ok, err := iceberg.VisitExprEvaluator(bound, m)
		if err != nil {
			return nil, fmt.Errorf("where predicate on %s: %w", pf.Path, err)
		}
		if ok {
			out = append(out, pf)
		}
	}
	return out, nil
}

// scopePartitions returns the files whose partition values satisfy text,
// which names partition columns only: decided exactly, on the values.
func (f *format) scopePartitions(files []table.PlanFile, text string, now time.Time) ([]table.PlanFile, error) {
	sc, types, err := f.partitionSchema()
	if err != nil {
		return nil, err
	}
	expr, err := where.ParseAt(text, sc, now)
	if err != nil {
		return nil, fmt.Errorf("%w: where predicate on Delta table %s: %w", optval.ErrBad, f.name, err)
	}
	match, err := iceberg.ExpressionEvaluator(sc, expr, false)
	if err != nil {
		return nil, fmt.Errorf("%w: where predicate %s: %w", optval.ErrBad, suggest.Excerpt(text), err)
	}
	var out []table.PlanFile
	for _, pf := range files {
		row, err := f.partitionRow(add(pf), types)
		if err != nil {
			return nil, err
		}
		ok, err := match(row)
		if err != nil {
			return nil, fmt.Errorf("where predicate on %s: %w", pf.Path, err)
		}
		if ok {
			out = append(out, pf)
		}
	}
	return out, nil
}

// errNoPartitionSchema is partitionSchema's answer for partition columns
// of a type the exact evaluation does not compare.
var errNoPartitionSchema = errors.New("partition columns the exact evaluation cannot compare")

// partitionSchema is the table's partition columns as an Iceberg schema
// (the types where.Parse and Iceberg's evaluator know), with their Delta
// type names.
func (f *format) partitionSchema() (*iceberg.Schema, []string, error) {
	parts := f.snap.Metadata.PartitionColumns
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
			return nil, nil, errNoPartitionSchema
		}
		fields[i] = iceberg.NestedField{ID: i + 1, Name: name, Type: typ}
		types[i] = pt.Name
	}
	return iceberg.NewSchema(0, fields...), types, nil
}

// icebergTypes are the Iceberg types of the Delta primitive types --where
// compares.
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
