package bench

import (
	"encoding/binary"
	"errors"
	"math"

	"github.com/apache/iceberg-go"

	"github.com/geocompact/geocompact/spatial"
)

// ErrNoSpatialColumns is returned for a table with neither the four bbox
// columns nor an Iceberg geometry column to filter on.
var ErrNoSpatialColumns = errors.New("bench: table has no bbox columns and no geometry column")

// spatialColumns is what a table offers to filter on: its four bbox double
// columns (preferred, as production queries on v2 tables use them) or its
// v3 geometry column.
type spatialColumns struct {
	// bboxIDs are the field IDs of bbox_minx, bbox_miny, bbox_maxx and
	// bbox_maxy; zero when the table lacks them.
	bboxIDs [4]int
	// geometry and geometryID name the v3 geometry column used when the
	// bbox columns are missing.
	geometry   string
	geometryID int
}

// columnsOf finds the columns windows are filtered on.
func columnsOf(sc *iceberg.Schema, props iceberg.Properties) (spatialColumns, error) {
	var c spatialColumns
	found := 0
	for i, name := range spatial.BBoxColumns {
		f, ok := sc.FindFieldByName(name)
		if ok && f.Type.Equals(iceberg.PrimitiveTypes.Float64) {
			c.bboxIDs[i] = f.ID
			found++
		}
	}
	if found == 4 {
		return c, nil
	}
	c.bboxIDs = [4]int{}
	if name := props.Get(spatial.PropGeometryColumn, ""); name != "" {
		if f, ok := sc.FindFieldByName(name); ok {
			if _, isGeom := f.Type.(iceberg.GeometryType); isGeom {
				c.geometry, c.geometryID = f.Name, f.ID
				return c, nil
			}
		}
	}
	for _, f := range sc.Fields() {
		if _, isGeom := f.Type.(iceberg.GeometryType); isGeom {
			c.geometry, c.geometryID = f.Name, f.ID
			return c, nil
		}
	}
	return c, ErrNoSpatialColumns
}

func (c spatialColumns) hasBBox() bool { return c.bboxIDs[0] != 0 }

// names returns the columns a row-bounds read selects.
func (c spatialColumns) names() []string {
	if c.hasBBox() {
		return spatial.BBoxColumns[:]
	}
	return []string{c.geometry}
}

// Filter returns the predicate a production query uses for window w:
// bbox_maxx >= minx AND bbox_minx <= maxx AND bbox_maxy >= miny AND
// bbox_miny <= maxy on the bbox columns, or BBoxIntersects on the
// geometry column. Both keep rows whose bbox touches w.
func (c spatialColumns) filter(w spatial.Bound) iceberg.BooleanExpression {
	if !c.hasBBox() {
		return iceberg.BBoxIntersects(iceberg.Reference(c.geometry),
			iceberg.BoundingBox{MinX: w.MinX, MinY: w.MinY, MaxX: w.MaxX, MaxY: w.MaxY})
	}
	return iceberg.NewAnd(
		iceberg.GreaterThanEqual(iceberg.Reference("bbox_maxx"), w.MinX),
		iceberg.LessThanEqual(iceberg.Reference("bbox_minx"), w.MaxX),
		iceberg.GreaterThanEqual(iceberg.Reference("bbox_maxy"), w.MinY),
		iceberg.LessThanEqual(iceberg.Reference("bbox_miny"), w.MaxY),
	)
}

// fileBound is the bbox a data file's manifest statistics claim for its
// rows, which is what scan planning prunes on. ok is false when the file
// carries no usable bounds (metrics mode none, or NaN values).
func (c spatialColumns) fileBound(lower, upper map[int][]byte) (spatial.Bound, bool) {
	if !c.hasBBox() {
		lo, okl := decodeXY(lower[c.geometryID])
		hi, okh := decodeXY(upper[c.geometryID])
		if !okl || !okh {
			return spatial.Bound{}, false
		}
		b := spatial.Bound{MinX: lo[0], MinY: lo[1], MaxX: hi[0], MaxY: hi[1]}
		return b, !b.IsEmpty()
	}
	var v [4]float64
	for i, id := range c.bboxIDs {
		m := lower
		if i >= 2 {
			m = upper
		}
		f, ok := decodeDouble(m[id])
		if !ok {
			return spatial.Bound{}, false
		}
		v[i] = f
	}
	b := spatial.Bound{MinX: v[0], MinY: v[1], MaxX: v[2], MaxY: v[3]}
	return b, !b.IsEmpty()
}

// decodeDouble decodes Iceberg's single-value serialisation of a double:
// 8 bytes, little-endian.
func decodeDouble(b []byte) (float64, bool) {
	if len(b) != 8 {
		return 0, false
	}
	f := math.Float64frombits(binary.LittleEndian.Uint64(b))
	return f, !math.IsNaN(f)
}

// decodeXY decodes a geometry bound (Iceberg spec, Appendix D): X and Y as
// little-endian doubles, optionally followed by Z and M.
func decodeXY(b []byte) ([2]float64, bool) {
	if len(b) < 16 {
		return [2]float64{}, false
	}
	x := math.Float64frombits(binary.LittleEndian.Uint64(b))
	y := math.Float64frombits(binary.LittleEndian.Uint64(b[8:]))
	return [2]float64{x, y}, !math.IsNaN(x) && !math.IsNaN(y)
}
