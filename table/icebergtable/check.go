package icebergtable

import (
	"context"
	"fmt"
	"maps"

	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/spatial/icebergspatial"
	format "github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/validate"
)

// CheckColumns returns the table's spatial columns (the geometry column
// named column, when set) and its properties, which the table's spatial
// metadata is checked against.
func (t *Table) CheckColumns(column string) (spatial.Columns, map[string]string, error) {
	props := t.properties()
	cols, err := icebergspatial.Columns(t.Table.Schema(), props, column)
	return cols, props, err
}

// ReportPath names f in a validation report: its path.
func (t *Table) ReportPath(f format.PlanFile) (string, error) { return f.Path, nil }

// CheckFile validates the data file f whole with validate's file checks,
// read through the table's FileIO, against the table's geometry column
// and CRS: iceberg-go writes no GeoParquet metadata, so the table's CRS
// stands for it. A file that cannot be opened is an error.
func (t *Table) CheckFile(ctx context.Context, f format.PlanFile, cols spatial.Columns, cfg validate.Config) (*validate.Report, error) {
	fsys, err := t.Table.FS(ctx)
	if err != nil {
		return nil, fmt.Errorf("open file IO of %s: %w", t.Name, err)
	}
	cfg.Column = cols.Geometry
	cfg.Props = t.properties()
	cfg.Props[spatial.PropCRS] = cols.CRS
	cfg.CRS = cols.CRS
	r, err := fsys.Open(f.Path)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", f.Path, err)
	}
	defer r.Close()
	rep, err := validate.Reader(ctx, r, cfg)
	if err != nil {
		return nil, fmt.Errorf("validate %s: %w", f.Path, err)
	}
	return rep, nil
}

// properties is a copy of the table's properties.
func (t *Table) properties() map[string]string {
	props := maps.Clone(map[string]string(t.Table.Properties()))
	if props == nil {
		props = map[string]string{}
	}
	return props
}
