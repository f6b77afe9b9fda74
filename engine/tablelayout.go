package engine

import (
	"fmt"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/geocompact/geocompact/cluster"
	"github.com/geocompact/geocompact/engine/catalogs"
	"github.com/geocompact/geocompact/spatial"
)

// PropLayout is the table property that records a table's layout when
// Iceberg's sort-order spec cannot express it: a space-filling curve, STR,
// the automatic choice, or a linear order over columns the table does not
// hold (the bbox columns of a table with only a geometry column). Its
// value is "auto" or a sort order in the canonical form cluster.ParseOrder
// reads ("hilbert()", "zorder(bbox_minx, bbox_miny)", "str()"); a curve
// name as --curve spells it ("hilbert") is read too. A plain column order
// is recorded as the table's Iceberg sort order instead, so that other
// engines honour it; the property wins when both are set.
const PropLayout = "geocompact.layout"

// CurveAuto is the --curve name of the automatic choice: each group is
// laid out by the candidate (cluster.AutoCandidates) that cluster.Choose
// predicts plans the fewest files.
const CurveAuto = "auto"

// LayoutCurves are the --curve names a rewrite and alter accept.
var LayoutCurves = append(slices.Clone(cluster.CurveNames), CurveAuto)

// TableLayout is the layout a table records, as a rewrite without
// --strategy, --curve or --sort-order applies it.
type TableLayout struct {
	// Text is "auto" or the order in canonical form; "" when the table
	// records no layout (a rewrite bin-packs).
	Text string `json:"layout"`
	// Source is LayoutFromProperty or LayoutFromSortOrder ("" for none).
	Source string `json:"source"`
}

// RecordedLayout returns the layout tbl records: PropLayout when set,
// else its Iceberg sort order when that is a plain column order (a sort by
// a transform such as bucket or day cannot be evaluated by a rewrite and
// counts as none). A PropLayout value that does not parse is an error
// naming the property and the fix.
func RecordedLayout(tbl *table.Table) (TableLayout, error) {
	if l, ok, err := propertyLayout(catalogs.TableName(tbl), tbl.Properties()); ok || err != nil {
		return l, err
	}
	if o, ok := TableSortOrder(tbl); ok {
		return TableLayout{Text: o.String(), Source: LayoutFromSortOrder}, nil
	}
	return TableLayout{}, nil
}

// propertyLayout returns the layout the table property PropLayout
// records, and whether it records one.
func propertyLayout(table string, props map[string]string) (TableLayout, bool, error) {
	v := strings.TrimSpace(props[PropLayout])
	if v == "" {
		return TableLayout{}, false, nil
	}
	o, auto, err := ParseLayout(v)
	if err != nil {
		return TableLayout{}, false, fmt.Errorf("%w: table %s: property %s=%q: %w; record a layout with geocompact alter --table %s --curve hilbert, or --unset %s",
			ErrOption, table, PropLayout, v, err, table, PropLayout)
	}
	return TableLayout{Text: LayoutText(o, auto), Source: LayoutFromProperty}, true, nil
}

// ParseLayout parses a recorded layout: "auto" (reported as auto), a
// curve name as --curve spells it, or a sort order cluster.ParseOrder
// reads.
func ParseLayout(s string) (o cluster.Order, auto bool, err error) {
	n := strings.ToLower(strings.TrimSpace(s))
	if slices.Contains(LayoutCurves, n) {
		return ParseCurve(n)
	}
	o, err = cluster.ParseOrder(s)
	return o, false, err
}

// LayoutText is the canonical text of a layout: "auto" or o.String(),
// as PropLayout records it.
func LayoutText(o cluster.Order, auto bool) string {
	if auto {
		return CurveAuto
	}
	return o.String()
}

// orderColumns lists the columns an order names; empty for a curve over
// the rows' position.
func orderColumns(o cluster.Order) []string {
	if o.Curve != cluster.CurveLinear {
		return o.Columns
	}
	cols := make([]string, len(o.Fields))
	for i, f := range o.Fields {
		cols[i] = f.Column
	}
	return cols
}

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
	cols := orderColumns(o)
	if len(cols) == 0 && o.Curve != cluster.CurveLinear && lt.geometry == "" {
		cols = spatial.BBoxColumns[:]
	}
	for _, c := range cols {
		if slices.Contains(lt.columns, c) || derived(c) {
			continue
		}
		return fmt.Errorf("%w: sort order %s: table %s has no column %q; its columns are %s",
			ErrOption, LayoutText(o, auto), lt.name, c, strings.Join(lt.columns, ", "))
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
