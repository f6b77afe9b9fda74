package table

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/geocompact/geocompact/spatial"
)

// ErrMetadataTable is returned for a metadata table a table does not
// have, named as asked.
var ErrMetadataTable = errors.New("inspect: unknown metadata table")

// Field is one named value of a Row.
type Field struct {
	Key   string
	Value any
}

// Row is one row of a metadata table: its columns in the format's order,
// with snake_case names as in Iceberg's metadata tables. It marshals to a
// JSON object that keeps that order. Values are nil (null), bool, int32,
// int64, float64, string, time.Time (timestamps, in UTC), []any (lists),
// Row (structs, such as a file's partition), map[string]any (maps) and,
// for the files table's bbox column, spatial.Bound.
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

// TableSchema is a table's shape: its columns, where its geometry lives,
// and how it is partitioned, sorted and laid out.
type TableSchema struct {
	Table         string `json:"table"`
	FormatVersion int    `json:"format_version"`
	// Format names a table that is not Iceberg, with its protocol, e.g.
	// "delta (reader v3, writer v7)"; empty for Iceberg.
	Format  string         `json:"format,omitempty"`
	Columns []SchemaColumn `json:"columns"`
	// Geometry is nil when the table has no usable geometry column;
	// GeometryProblem then says why.
	Geometry        *SchemaGeometry `json:"geometry,omitempty"`
	GeometryProblem string          `json:"geometry_problem,omitempty"`
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

// SchemaColumn is one top-level column of a table schema.
type SchemaColumn struct {
	ID       int    `json:"id"`
	Name     string `json:"name"`
	Type     string `json:"type"`
	Required bool   `json:"required"`
}

// SchemaGeometry is where a table's geometry lives, as every command
// resolves it.
type SchemaGeometry struct {
	Column      string   `json:"column"`
	Encoding    string   `json:"encoding"`
	CRS         string   `json:"crs"`
	CRSSource   string   `json:"crs_source"`
	BBoxColumns []string `json:"bbox_columns"`
}

// GeometryOf is the SchemaGeometry of resolved columns: the flat bbox
// columns, or a covering's fields as column.field.
func GeometryOf(cols spatial.Columns) *SchemaGeometry {
	g := &SchemaGeometry{Column: cols.Geometry, Encoding: cols.Encoding, CRS: cols.CRS, CRSSource: cols.CRSSource, BBoxColumns: []string{}}
	for _, b := range cols.BBox {
		if b != "" {
			g.BBoxColumns = append(g.BBoxColumns, b)
		}
	}
	if len(g.BBoxColumns) == 0 && cols.Covering != "" {
		for _, f := range cols.CoveringFields {
			g.BBoxColumns = append(g.BBoxColumns, cols.Covering+"."+f)
		}
	}
	return g
}
