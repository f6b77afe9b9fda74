package engine

import (
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/geocompact/geocompact/cluster"
	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/layouts"
	"github.com/geocompact/geocompact/table/optval"
)

// layout is how a rewrite orders rows.
type layout struct {
	strategy  Strategy
	order     cluster.Order
	orderText string
	normalize cluster.Normalization
	// geometry is the table's geometry column ("" for none).
	geometry string
	// auto is set for --curve auto: each group's order is chosen when the
	// rewrite is planned (see chooseLayouts); order stays empty.
	auto bool
	// source says where the layout came from (see Result.LayoutSource).
	source string
}

// layoutTable is what choosing a rewrite's layout needs of a table, in
// any format.
type layoutTable struct {
	name     string
	geometry string
	recorded layouts.Record
	columns  []string
	// schema, when known, is the Arrow schema rows are read with: an
	// order is checked against it (a curve's dimensions) when planned.
	schema *arrow.Schema
}

// layoutTableOf describes t for choosing and checking a layout.
func layoutTableOf(t table.Table) (layoutTable, error) {
	lt := layoutTable{name: t.Name, geometry: t.Geometry, columns: t.Columns, schema: t.Schema}
	if t.Layout == nil {
		return lt, nil
	}
	var err error
	lt.recorded, err = t.Layout()
	return lt, err
}

// resolve turns the strategy, curve and sort order of cfg into a layout
// for the table lt describes. A curve or a sort order implies the sort
// strategy. Without either, the table's recorded layout applies, else
// binpack; strategy sort without an order fails when the table records
// none. (Whether the request may replace the recorded layout is checked
// when the rewrite is planned: see checkLayoutChange.)
func (lt layoutTable) resolve(cfg Request, opts Options) (layout, error) {
	rl, err := cfg.layout()
	if err != nil {
		return layout{}, err
	}
	l := layout{strategy: rl.strategy, order: rl.order, auto: rl.auto, geometry: lt.geometry, source: layouts.FromRequest}
	rec := lt.recorded
	switch {
	case rl.given:
	case cfg.Strategy == BinPack:
		return l, nil
	case rec.Text != "":
		l.source = rec.Source
		l.order, l.auto, err = layouts.Parse(rec.Text)
	case cfg.Strategy == Sort:
		return l, fmt.Errorf("%w: strategy sort needs an order, and table %s has no sort order; %w", optval.ErrBad, lt.name, ErrNoOrder)
	default:
		l.strategy, l.source = BinPack, layouts.FromDefault
		return l, nil
	}
	l.strategy = Sort
	if err != nil {
		// A curve or sort order that does not parse is a usage mistake.
		return l, fmt.Errorf("%w: %w", optval.ErrBad, err)
	}
	if l.normalize, err = cluster.ParseNormalization(opts.Normalize); err != nil {
		return l, fmt.Errorf("%w: %w", optval.ErrBad, err)
	}
	l.orderText = layouts.Text(l.order, l.auto)
	if err := lt.checkOrderColumns(l.order, l.auto); err != nil {
		return l, err
	}
	return l, lt.checkOrder(l)
}

// checkOrder fails, as a usage mistake, when l's order cannot key rows of
// the table's schema (a curve over one dimension, a column of a type no
// key takes), so that the plan fails instead of the first sorted group.
func (lt layoutTable) checkOrder(l layout) error {
	if lt.schema == nil || l.auto || l.strategy != Sort {
		return nil
	}
	if _, err := cluster.NewSorter(l.order, lt.schema, cluster.SortOptions{Normalize: l.normalize, Files: 1}); err != nil {
		return fmt.Errorf("%w: table %s: %w", optval.ErrBad, lt.name, err)
	}
	return nil
}

// checkLayoutChange fails with a *layouts.ChangeError when l, asked for
// by the request, differs from the layout the table records and the
// request does not allow it. Planning checks it (a rewrite, a job's
// preparation); a job's workers, which replay the plan, do not.
func (lt layoutTable) checkLayoutChange(l layout, cfg Request) error {
	if l.source != layouts.FromRequest || cfg.AllowLayoutChange {
		return nil
	}
	rec := lt.recorded
	if rec.Text == "" {
		return nil
	}
	requested := "binpack"
	if l.strategy == Sort {
		requested = l.orderText
	}
	if requested == rec.Text {
		return nil
	}
	return &layouts.ChangeError{Table: lt.name, Recorded: rec.Text, Source: rec.Source, Requested: requested}
}

// spatial reports whether the layout orders rows by their position: a
// curve over the spatial columns, or a linear order led by a bbox column.
// An automatic choice is spatial whatever it picks.
func (l layout) spatial() bool {
	if l.strategy != Sort {
		return false
	}
	if l.auto {
		return true
	}
	if l.order.Curve != cluster.CurveLinear {
		return len(l.order.Columns) == 0 || slices.ContainsFunc(l.order.Columns, l.isSpatialColumn)
	}
	return len(l.order.Fields) > 0 && l.isSpatialColumn(l.order.Fields[0].Column)
}

// isSpatialColumn reports whether name holds a row's position: a bbox
// column, the table's geometry column or a GeoParquet covering ("bbox").
func (l layout) isSpatialColumn(name string) bool {
	return slices.Contains(spatial.BBoxColumns[:], name) || (name != "" && name == l.geometry) || name == "bbox"
}
