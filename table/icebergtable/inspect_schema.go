package icebergtable

import (
	"fmt"
	"maps"
	"strings"

	"github.com/apache/iceberg-go/table"

	"github.com/geocompact/geocompact/spatial/icebergspatial"
	format "github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/catalogs"
)

// TableSchema describes t's schema, geometry, partitioning, sort order
// and properties.
func (t *Table) TableSchema() format.TableSchema {
	tbl := t.Table
	sc := tbl.Schema()
	out := format.TableSchema{
		Table: catalogs.TableName(tbl), FormatVersion: tbl.Metadata().Version(),
		Columns: []format.SchemaColumn{}, Properties: maps.Clone(tbl.Properties()),
		PartitionSpec: partitionText(tbl), SortOrder: sortOrderText(tbl),
	}
	if out.Properties == nil {
		out.Properties = map[string]string{}
	}
	for _, f := range sc.Fields() {
		out.Columns = append(out.Columns, format.SchemaColumn{ID: f.ID, Name: f.Name, Type: f.Type.String(), Required: f.Required})
	}
	cols, err := icebergspatial.Columns(sc, tbl.Properties(), "")
	if err != nil {
		out.GeometryProblem = err.Error()
	} else {
		out.Geometry = format.GeometryOf(cols)
	}
	if s := tbl.CurrentSnapshot(); s != nil && s.Summary != nil {
		if st := s.Summary.Properties[format.SummaryStrategy]; st != "" {
			out.LastRewrite = strings.TrimSpace(st + " " + s.Summary.Properties[format.SummarySortOrder])
		}
	}
	return out
}

// partitionText spells the current partition spec as transform(column).
func partitionText(tbl *table.Table) string {
	spec := tbl.Spec()
	var parts []string
	for _, f := range spec.Fields() {
		name, ok := tbl.Schema().FindColumnName(f.SourceID())
		if !ok {
			name = fmt.Sprintf("field %d", f.SourceID())
		}
		if t := f.Transform.String(); t == "identity" {
			parts = append(parts, name)
		} else {
			parts = append(parts, t+"("+name+")")
		}
	}
	if len(parts) == 0 {
		return "unpartitioned"
	}
	return strings.Join(parts, ", ")
}

// sortOrderText spells the table's sort order as "column [desc] ...".
func sortOrderText(tbl *table.Table) string {
	so := tbl.SortOrder()
	if so.IsUnsorted() {
		return "unsorted"
	}
	var parts []string
	for _, f := range so.Fields() {
		name, ok := tbl.Schema().FindColumnName(f.SourceID())
		if !ok {
			name = fmt.Sprintf("field %d", f.SourceID())
		}
		if t := f.Transform.String(); t != "identity" {
			name = t + "(" + name + ")"
		}
		parts = append(parts, fmt.Sprintf("%s %s %s", name, f.Direction, f.NullOrder))
	}
	return strings.Join(parts, ", ")
}
