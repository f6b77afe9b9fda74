package inspect

import (
	"fmt"
	"maps"
	"strings"

	"github.com/apache/iceberg-go/table"

	"github.com/geocompact/geocompact/spatial/icebergspatial"
	format "github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/catalogs"
)

// TableSchema is a table's shape: its columns, where its geometry lives,
// and how it is partitioned, sorted and laid out.
type TableSchema struct {
	Table         string `json:"table"`
	FormatVersion int    `json:"format_version"`
	// Format names a table that is not Iceberg, with its protocol, e.g.
	// "delta (reader v3, writer v7)"; empty for Iceberg.
	Format  string   `json:"format,omitempty"`
	Columns []Column `json:"columns"`
	// Geometry is nil when the table has no usable geometry column;
	// GeometryProblem then says why.
	Geometry        *Geometry `json:"geometry,omitempty"`
	GeometryProblem string    `json:"geometry_problem,omitempty"`
	// PartitionSpec is the current spec, e.g. "day(ts), bucket[16](id)",
	// or "unpartitioned".
	PartitionSpec string `json:"partition_spec"`
	// SortOrder is the table's Iceberg sort order, or "unsorted".
	SortOrder string `json:"sort_order"`
	// LastRewrite is the strategy and order of the rewrite that made the
	// current snapshot, e.g. "sort hilbert(...)"; empty when the current
	// snapshot is not a geocompact rewrite.
	LastRewrite string            `json:"last_rewrite,omitempty"`
	Properties  map[string]string `json:"properties"`
}

// Column is one top-level column of a table schema.
type Column struct {
	ID       int    `json:"id"`
	Name     string `json:"name"`
	Type     string `json:"type"`
	Required bool   `json:"required"`
}

// Geometry is where a table's geometry lives, as every command resolves
// it (icebergspatial.Columns).
type Geometry struct {
	Column      string   `json:"column"`
	Encoding    string   `json:"encoding"`
	CRS         string   `json:"crs"`
	CRSSource   string   `json:"crs_source"`
	BBoxColumns []string `json:"bbox_columns"`
}

// Schema describes tbl's schema, geometry, partitioning, sort order and
// properties.
func Schema(tbl *table.Table) TableSchema {
	sc := tbl.Schema()
	out := TableSchema{
		Table: catalogs.TableName(tbl), FormatVersion: tbl.Metadata().Version(),
		Columns: []Column{}, Properties: maps.Clone(tbl.Properties()),
		PartitionSpec: partitionText(tbl), SortOrder: sortOrderText(tbl),
	}
	if out.Properties == nil {
		out.Properties = map[string]string{}
	}
	for _, f := range sc.Fields() {
		out.Columns = append(out.Columns, Column{ID: f.ID, Name: f.Name, Type: f.Type.String(), Required: f.Required})
	}
	cols, err := icebergspatial.Columns(sc, tbl.Properties(), "")
	if err != nil {
		out.GeometryProblem = err.Error()
	} else {
		out.Geometry = geometryOf(cols)
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
