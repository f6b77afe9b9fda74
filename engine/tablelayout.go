package engine

import (
	"fmt"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/geocompact/geocompact/cluster"
	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/table/layouts"
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
		hint := ""
		if lt.geometry == "" && slices.Contains(spatial.BBoxColumns[:], c) {
			hint = fmt.Sprintf("; no geometry column was found either: name the WKB column with the table property %s (geocompact alter --set %s=COLUMN)",
				spatial.PropGeometryColumn, spatial.PropGeometryColumn)
		}
		return fmt.Errorf("%w: sort order %s: table %s has no column %q; its columns are %s%s",
			ErrOption, layouts.Text(o, auto), lt.name, c, strings.Join(lt.columns, ", "), hint)
	}
	return nil
}

// CheckLayoutColumns fails when layout o (auto: the automatic choice)
// names a column tbl does not hold, listing the table's columns, as a
// rewrite's plan does; the bbox columns may stand for the boxes of tbl's
// geometry column.
func CheckLayoutColumns(tbl *table.Table, o cluster.Order, auto bool) error {
	return layoutTable{name: catalogs.TableName(tbl), geometry: spatialGeomName(tbl), columns: topLevelColumns(tbl.Schema())}.checkOrderColumns(o, auto)
}

func topLevelColumns(sc *iceberg.Schema) []string {
	names := make([]string, 0, sc.NumFields())
	for _, f := range sc.Fields() {
		names = append(names, f.Name)
	}
	return names
}
