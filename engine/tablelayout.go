package engine

import (
	"fmt"
	"slices"
	"strings"

	"github.com/geocompact/geocompact/cluster"
	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/layouts"
	"github.com/geocompact/geocompact/table/optval"
)

// checkOrderColumns fails when order o names a column tbl does not hold,
// listing the table's columns, so that a mistake fails the plan instead
// of the write. The bbox columns (and a "bbox" covering) may stand for
// the geometry column's boxes when the table has one, as a Sorter reads
// them; a curve over the rows' position, and the automatic choice among
// such curves, needs bbox columns or a geometry column.
func (lt layoutTable) checkOrderColumns(o cluster.Order, auto bool) error {
	if auto {
		o = cluster.Order{Curve: cluster.CurveHilbert}
	}
	derived := func(c string) bool { return lt.geometry != "" && layout{geometry: lt.geometry}.isSpatialColumn(c) }
	cols := layouts.OrderColumns(o)
	if len(cols) == 0 && o.Curve != cluster.CurveLinear && lt.geometry == "" {
		cols = spatial.BBoxColumns[:]
	}
	for _, c := range cols {
		if slices.Contains(lt.columns, c) || derived(c) {
			continue
		}
		if lt.geometry == "" && slices.Contains(spatial.BBoxColumns[:], c) {
			return fmt.Errorf("%w: sort order %s: table %s has no column %q; its columns are %s; %w",
				optval.ErrBad, layouts.Text(o, auto), lt.name, c, strings.Join(lt.columns, ", "), ErrNameGeometry)
		}
		return fmt.Errorf("%w: sort order %s: table %s has no column %q; its columns are %s",
			optval.ErrBad, layouts.Text(o, auto), lt.name, c, strings.Join(lt.columns, ", "))
	}
	return nil
}

// CheckLayoutColumns fails when layout o (auto: the automatic choice)
// names a column t does not hold, listing the table's columns, as a
// rewrite's plan does; the bbox columns may stand for the boxes of t's
// geometry column. t needs no files (see icebergtable.Describe).
func CheckLayoutColumns(t table.Table, o cluster.Order, auto bool) error {
	return layoutTable{name: t.Name, geometry: t.Geometry, columns: t.Columns}.checkOrderColumns(o, auto)
}

// CheckLayout fails when layout o (auto: the automatic choice) cannot
// order t's rows, as a rewrite's plan would: a column t does not hold, a
// curve over one dimension.
func CheckLayout(t table.Table, o cluster.Order, auto bool) error {
	lt := layoutTable{name: t.Name, geometry: t.Geometry, columns: t.Columns, schema: t.Schema}
	if err := lt.checkOrderColumns(o, auto); err != nil {
		return err
	}
	return lt.checkOrder(layout{strategy: Sort, order: o, auto: auto})
}
