package engine

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/iceberg-go/table"

	"github.com/geocompact/geocompact/cluster"
	"github.com/geocompact/geocompact/engine/catalogs"
	"github.com/geocompact/geocompact/internal/suggest"
	"github.com/geocompact/geocompact/spatial"
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

// Where a rewrite's layout came from, as Result.LayoutSource says.
const (
	LayoutFromRequest   = "request"
	LayoutFromProperty  = "table property " + PropLayout
	LayoutFromSortOrder = "table sort order"
	LayoutFromDefault   = "default"
)

// ErrLayoutChange marks a rewrite that would replace the layout a table
// records with a different one without Request.AllowLayoutChange.
var ErrLayoutChange = errors.New("engine: layout change")

// LayoutChangeError says which recorded layout a rewrite would replace,
// and with what.
type LayoutChangeError struct {
	Table string
	// Recorded is the table's layout and Source where it is recorded.
	Recorded, Source string
	// Requested is the layout the rewrite asked for ("binpack" for none).
	Requested string
}

func (e *LayoutChangeError) Error() string {
	return fmt.Sprintf("table %s is laid out by %s (%s); this rewrite would lay it out by %s instead and lose that clustering: "+
		"drop the layout flags to keep the table's layout, pass --allow-layout-change (in a maintain policy, rewrite.allow-layout-change: true) to rewrite it anyway, "+
		"or record the new layout with geocompact alter --table %s", e.Table, e.Recorded, e.Source, e.Requested, e.Table)
}

// Unwrap returns ErrLayoutChange.
func (e *LayoutChangeError) Unwrap() error { return ErrLayoutChange }

// resolveLayout turns the strategy, curve and sort order of cfg into a
// layout. A curve or a sort order implies the sort strategy. Without
// either, the table's recorded layout (RecordedLayout) applies, else
// binpack; strategy sort without an order fails when the table records
// none. (Whether the request may replace the recorded layout is checked
// when the rewrite is planned: see checkLayoutChange.)
func resolveLayout(tbl *table.Table, cfg Request, opts Options) (layout, error) {
	lt, err := icebergLayoutTable(tbl)
	if err != nil {
		return layout{}, err
	}
	return lt.resolve(cfg, opts)
}

// layoutTable is what choosing a rewrite's layout needs of a table, in
// any format.
type layoutTable struct {
	name     string
	geometry string
	recorded TableLayout
	columns  []string
}

// icebergLayoutTable describes tbl for choosing a layout.
func icebergLayoutTable(tbl *table.Table) (layoutTable, error) {
	rec, err := RecordedLayout(tbl)
	return layoutTable{name: catalogs.TableName(tbl), geometry: spatialGeomName(tbl), recorded: rec, columns: topLevelColumns(tbl.Schema())}, err
}

// resolve is resolveLayout for the table lt describes.
func (lt layoutTable) resolve(cfg Request, opts Options) (layout, error) {
	l := layout{strategy: cfg.Strategy, geometry: lt.geometry, source: LayoutFromRequest}
	if err := checkRequestLayout(cfg); err != nil {
		return l, err
	}
	rec := lt.recorded
	var err error
	switch {
	case cfg.Curve != "":
		l.order, l.auto, err = ParseCurve(cfg.Curve)
	case cfg.SortOrder != "":
		l.order, err = cluster.ParseOrder(cfg.SortOrder)
	case cfg.Strategy == BinPack:
		return l, nil
	case rec.Text != "":
		l.source = rec.Source
		l.order, l.auto, err = ParseLayout(rec.Text)
	case cfg.Strategy == Sort:
		return l, fmt.Errorf("%w: strategy sort needs an order, and table %s has no sort order; pass --curve hilbert (or zorder, linear) or --sort-order EXPR",
			ErrOption, lt.name)
	default:
		l.strategy, l.source = BinPack, LayoutFromDefault
		return l, nil
	}
	l.strategy = Sort
	if err != nil {
		// A curve or sort order that does not parse is a usage mistake.
		return l, fmt.Errorf("%w: %w", ErrOption, err)
	}
	if l.normalize, err = cluster.ParseNormalization(opts.Normalize); err != nil {
		return l, fmt.Errorf("%w: %w", ErrOption, err)
	}
	l.orderText = LayoutText(l.order, l.auto)
	return l, lt.checkOrderColumns(l.order, l.auto)
}

// checkRequestLayout checks that the strategy, curve and sort order of
// cfg fit together.
func checkRequestLayout(cfg Request) error {
	if cfg.Strategy != "" && cfg.Strategy != BinPack && cfg.Strategy != Sort {
		return fmt.Errorf("%w: strategy %q: want binpack or sort", ErrOption, cfg.Strategy)
	}
	if cfg.Curve != "" && cfg.SortOrder != "" {
		return fmt.Errorf("%w: give --curve or --sort-order, not both", ErrOption)
	}
	if (cfg.Curve != "" || cfg.SortOrder != "") && cfg.Strategy == BinPack {
		return fmt.Errorf("%w: strategy binpack does not sort; drop --strategy binpack to use the sort order", ErrOption)
	}
	return nil
}

// checkLayoutChange fails with a *LayoutChangeError when l, asked for by
// the request, differs from the layout the table records and the request
// does not allow it. Planning checks it (a rewrite, a job's preparation);
// a job's workers, which replay the plan, do not.
func checkLayoutChange(tbl *table.Table, l layout, cfg Request) error {
	lt, err := icebergLayoutTable(tbl)
	if err != nil {
		return err
	}
	return lt.checkLayoutChange(l, cfg)
}

// checkLayoutChange is checkLayoutChange for the table lt describes.
func (lt layoutTable) checkLayoutChange(l layout, cfg Request) error {
	if l.source != LayoutFromRequest || cfg.AllowLayoutChange {
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
	return &LayoutChangeError{Table: lt.name, Recorded: rec.Text, Source: rec.Source, Requested: requested}
}

// ParseCurve parses a --curve name, one of LayoutCurves (case-insensitive):
// auto reports true and no order. An unknown name is an error wrapping
// cluster.ErrSortOrder that lists the names and suggests the closest.
func ParseCurve(name string) (cluster.Order, bool, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	if n == CurveAuto {
		return cluster.Order{}, true, nil
	}
	if !slices.Contains(cluster.CurveNames, n) {
		return cluster.Order{}, false, fmt.Errorf("%w: unknown curve %q (want %s or %s)%s", cluster.ErrSortOrder, name,
			strings.Join(LayoutCurves[:len(LayoutCurves)-1], ", "), LayoutCurves[len(LayoutCurves)-1], suggest.Hint(n, LayoutCurves))
	}
	o, err := cluster.CurveOrder(n)
	return o, false, err
}

// TableSortOrder converts the table's Iceberg sort order into a linear order, or
// reports false when the table is unsorted or sorts by a transform (bucket,
// day, ...) that a rewrite cannot evaluate.
func TableSortOrder(tbl *table.Table) (cluster.Order, bool) {
	so := tbl.SortOrder()
	if so.IsUnsorted() {
		return cluster.Order{}, false
	}
	o := cluster.Order{Curve: cluster.CurveLinear}
	for _, f := range so.Fields() {
		if f.Transform.String() != "identity" {
			return cluster.Order{}, false
		}
		name, ok := tbl.Schema().FindColumnName(f.SourceID())
		if !ok {
			return cluster.Order{}, false
		}
		field := cluster.Field{Column: name, Direction: cluster.Asc, Nulls: cluster.NullsFirst}
		if f.Direction == table.SortDESC {
			field.Direction = cluster.Desc
		}
		if f.NullOrder == table.NullsLast {
			field.Nulls = cluster.NullsLast
		}
		o.Fields = append(o.Fields, field)
	}
	return o, len(o.Fields) > 0
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
