package bench

import (
	"errors"

	"github.com/apache/iceberg-go"

	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/spatial/icebergspatial"
)

// ErrNoSpatialColumns is returned for a table with neither the four bbox
// columns nor an Iceberg geometry column to filter on.
var ErrNoSpatialColumns = errors.New("bench: table has no bbox columns and no geometry column")

// spatialColumns is what a table offers to filter on: its four bbox double
// columns (preferred, as production queries on v2 tables use them) or its
// v3 geometry column, as icebergspatial.Columns resolves them.
type spatialColumns struct {
	spatial.Columns
	sc *iceberg.Schema
}

// columnsOf finds the columns windows are filtered on.
func columnsOf(sc *iceberg.Schema, props iceberg.Properties) (spatialColumns, error) {
	cols, err := icebergspatial.Columns(sc, props, "")
	c := spatialColumns{Columns: cols, sc: sc}
	if cols.HasBBox() || (err == nil && cols.Encoding == spatial.EncodingIcebergGeometry) {
		return c, nil
	}
	return c, ErrNoSpatialColumns
}

// names returns the columns a row-bounds read selects.
func (c spatialColumns) names() []string {
	if c.HasBBox() {
		return c.BBox[:]
	}
	return []string{c.Geometry}
}

// filter returns the predicate a production query uses for window w:
// bbox_maxx >= minx AND bbox_minx <= maxx AND bbox_maxy >= miny AND
// bbox_miny <= maxy on the bbox columns, or BBoxIntersects on the
// geometry column. Both keep rows whose bbox touches w.
func (c spatialColumns) filter(w spatial.Bound) iceberg.BooleanExpression {
	if !c.HasBBox() {
		return iceberg.BBoxIntersects(iceberg.Reference(c.Geometry),
			iceberg.BoundingBox{MinX: w.MinX, MinY: w.MinY, MaxX: w.MaxX, MaxY: w.MaxY})
	}
	return iceberg.NewAnd(
		iceberg.GreaterThanEqual(iceberg.Reference(c.BBox[2]), w.MinX),
		iceberg.LessThanEqual(iceberg.Reference(c.BBox[0]), w.MaxX),
		iceberg.GreaterThanEqual(iceberg.Reference(c.BBox[3]), w.MinY),
		iceberg.LessThanEqual(iceberg.Reference(c.BBox[1]), w.MaxY),
	)
}

// fileBound is the bbox a data file's manifest statistics claim for its
// rows (icebergspatial.FileBound), which is what scan planning prunes on.
func (c spatialColumns) fileBound(lower, upper map[int][]byte) (spatial.Bound, bool) {
	return icebergspatial.FileBound(c.sc, c.Columns, lower, upper)
}
