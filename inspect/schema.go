package inspect

import (
	"fmt"

	"github.com/geocompact/geocompact/table"
)

// TableSchema is a table's shape: its columns, where its geometry lives,
// and how it is partitioned, sorted and laid out (see table.TableSchema).
type TableSchema = table.TableSchema

// Column is one top-level column of a table schema.
type Column = table.SchemaColumn

// Geometry is where a table's geometry lives, as every command resolves
// it.
type Geometry = table.SchemaGeometry

// schemaDescriber is a format that describes its table's schema:
// icebergtable.Table, a Delta table's format.
type schemaDescriber interface {
	// TableSchema describes the table's schema, geometry, partitioning,
	// sort order and properties.
	TableSchema() table.TableSchema
}

// Schema describes t's schema, geometry, partitioning, sort order and
// properties, as t's format describes them.
func Schema(t table.Table) (TableSchema, error) {
	d, ok := t.Format.(schemaDescriber)
	if !ok {
		return TableSchema{}, fmt.Errorf("inspect: table %s does not describe its schema", t.Name)
	}
	return d.TableSchema(), nil
}
