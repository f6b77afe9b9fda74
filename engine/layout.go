package engine

import (
	"fmt"
	"iter"
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
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
		return l, err
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

// sortGroup reads every batch of the group, then orders all its rows by
// the layout's key at once (not per batch). It returns the sorted batches
// and the row count.
//
// Curve positions are normalised over the group's extent (the union of the
// rows' bboxes, known once every row is read), so the keys depend only on
// the group's rows.
//
// The sorted batches hold sortedFileRows(rows, files) rows each, one file's
// worth.
func (ex *execution) sortGroup(sc *arrow.Schema, recs iter.Seq2[arrow.RecordBatch, error], digest func(arrow.RecordBatch) error, extent func() spatial.Bound, files int) ([]arrow.RecordBatch, int64, error) {
	var in []arrow.RecordBatch
	release := func() {
		for _, r := range in {
			r.Release()
		}
	}
	var rows int64
	for rec, err := range recs {
		if err == nil {
			err = digest(rec)
		}
		if err != nil {
			if rec != nil {
				rec.Release()
			}
			release()
			return nil, 0, fmt.Errorf("read: %w", err)
		}
		rows += rec.NumRows()
		in = append(in, rec)
	}
	defer release()
	if rows == 0 {
		return nil, 0, nil
	}
	sorter, err := cluster.NewSorter(ex.r.lay.order, sc, cluster.SortOptions{Extent: extent(), Normalize: ex.r.lay.normalize})
	if err != nil {
		return nil, 0, err
	}
	out, err := sorter.Sort(in, int(min(sortedFileRows(rows, files), math.MaxInt32)))
	if err != nil {
		return nil, 0, fmt.Errorf("sort: %w", err)
	}
	return out, rows, nil
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
