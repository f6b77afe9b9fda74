package engine

import (
	"fmt"
	"slices"

	"github.com/apache/iceberg-go/table"

	"github.com/geocompact/geocompact/cluster"
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
}

// resolveLayout turns the strategy, curve and sort order of cfg into a
// layout. A curve or a sort order implies the sort strategy; sort without
// either uses the table's own sort order and fails when it has none.
func resolveLayout(tbl *table.Table, cfg Request, opts Options) (layout, error) {
	l := layout{strategy: cfg.Strategy, geometry: spatialGeomName(tbl)}
	if l.strategy == "" {
		l.strategy = BinPack
	}
	if l.strategy != BinPack && l.strategy != Sort {
		return l, fmt.Errorf("%w: strategy %q: want binpack or sort", ErrOption, cfg.Strategy)
	}
	if cfg.Curve != "" && cfg.SortOrder != "" {
		return l, fmt.Errorf("%w: give --curve or --sort-order, not both", ErrOption)
	}
	if (cfg.Curve != "" || cfg.SortOrder != "") && cfg.Strategy == BinPack {
		return l, fmt.Errorf("%w: strategy binpack does not sort; drop --strategy binpack to use the sort order", ErrOption)
	}
	var err error
	switch {
	case cfg.Curve != "":
		l.strategy = Sort
		l.order, err = cluster.CurveOrder(cfg.Curve)
	case cfg.SortOrder != "":
		l.strategy = Sort
		l.order, err = cluster.ParseOrder(cfg.SortOrder)
	case l.strategy == Sort:
		var ok bool
		l.order, ok = tableSortOrder(tbl)
		if !ok {
			return l, fmt.Errorf("%w: strategy sort needs an order, and table %s has no sort order; pass --curve hilbert (or zorder, linear) or --sort-order EXPR",
				ErrOption, TableName(tbl))
		}
	default:
		return l, nil
	}
	if err != nil {
		// A curve or sort order that does not parse is a usage mistake.
		return l, fmt.Errorf("%w: %w", ErrOption, err)
	}
	if l.normalize, err = cluster.ParseNormalization(opts.Normalize); err != nil {
		return l, fmt.Errorf("%w: %w", ErrOption, err)
	}
	l.orderText = l.order.String()
	return l, nil
}

// tableSortOrder converts the table's sort order into a linear order, or
// reports false when the table is unsorted or sorts by a transform (bucket,
// day, ...) that a rewrite cannot evaluate.
func tableSortOrder(tbl *table.Table) (cluster.Order, bool) {
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
func (l layout) spatial() bool {
	if l.strategy != Sort {
		return false
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
