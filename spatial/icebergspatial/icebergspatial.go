// Package icebergspatial reads the spatial facts of an Iceberg schema: its
// geometry and bbox columns, and the box a data file's column statistics
// claim. It keeps iceberg-go out of spatial.
package icebergspatial

import (
	"encoding/binary"
	"math"
	"strings"

	"github.com/apache/iceberg-go"

	"github.com/geocompact/geocompact/spatial"
)

// Columns finds the geometry column of an Iceberg table from
// its schema and properties: the column named by hints.Column, else by
// spatial.PropGeometryColumn, else the first field of the v3 geometry type. A v3
// geometry field carries its own CRS; a binary one takes spatial.PropCRS, which
// defaults to OGC:CRS84. It is the one resolver of a table's geometry
// column: the rewrite, its verification, validation, layouts and bench all
// ask it, so they cannot disagree about which column is the geometry.
//
// The bbox columns (spatial.BBoxColumns, of type double) are found first: on an
// error the returned Columns still names them, for callers that can work
// from bbox columns alone.
func Columns(sc *iceberg.Schema, props map[string]string, column string) (spatial.Columns, error) {
	c := spatial.Columns{Geometry: column}
	for i, name := range spatial.BBoxColumns {
		if bf, ok := sc.FindFieldByName(name); ok && strings.EqualFold(bf.Type.String(), "double") {
			c.BBox[i] = name
		}
	}
	if c.Geometry == "" {
		c.Geometry = props[spatial.PropGeometryColumn]
	}
	if c.Geometry == "" {
		for _, f := range sc.Fields() {
			if _, ok := f.Type.(iceberg.GeometryType); ok {
				c.Geometry = f.Name
				break
			}
		}
	}
	if c.Geometry == "" {
		return c, spatial.NewColumnError("", "geometry.column", "table has no geometry column: set the table property "+spatial.PropGeometryColumn, spatial.ErrGeometryColumn)
	}
	f, ok := sc.FindFieldByName(c.Geometry)
	if !ok {
		return c, spatial.NewColumnError(c.Geometry, "geometry.column", "geometry column is not in the table schema", spatial.ErrGeometryColumn)
	}
	var err error
	switch t := f.Type.(type) {
	case iceberg.GeometryType:
		c.Encoding, c.CRSSource = spatial.EncodingIcebergGeometry, "iceberg type"
		c.CRS, err = spatial.NormalizeCRS(t.CRS())
	case iceberg.BinaryType:
		c.Encoding, c.CRSSource = spatial.EncodingWKB, "table property"
		crs := props[spatial.PropCRS]
		if crs == "" {
			crs = spatial.DefaultCRS
		}
		c.CRS, err = spatial.NormalizeCRS(crs)
	default:
		kind := "has type " + f.Type.String()
		if _, ok := f.Type.(iceberg.StringType); ok {
			kind = "is a string column (WKT or GeoJSON?)"
		}
		return c, spatial.NewColumnError(c.Geometry, "geometry.column", "geometry column "+kind+"; want binary WKB or geometry", spatial.ErrGeometryColumn)
	}
	if err != nil {
		return c, spatial.NewColumnError(c.Geometry, "crs.missing", err.Error(), err)
	}
	return c, nil
}

// FileBound is the bounding box a data file's column statistics claim for
// its rows, which is what scan planning prunes on. lower and upper are the
// file's bounds keyed by field id (as iceberg.DataFile and the files
// metadata table hold them); sc resolves cols' names to ids.
//
// The rule: when the table has all four bbox columns, the box is
// lower(bbox_minx), lower(bbox_miny), upper(bbox_maxx), upper(bbox_maxy);
// otherwise, for a geometry column of the Iceberg v3 geometry type, it is
// the column's lower and upper bound points. It reports false when the
// file carries no such bounds (metrics mode none), or they are malformed,
// NaN or inverted: a file without a usable bound cannot be pruned.
func FileBound(sc *iceberg.Schema, cols spatial.Columns, lower, upper map[int][]byte) (spatial.Bound, bool) {
	if cols.HasBBox() {
		var v [4]float64
		for i, name := range cols.BBox {
			f, ok := sc.FindFieldByName(name)
			if !ok {
				return spatial.Bound{}, false
			}
			src := lower
			if i >= 2 {
				src = upper
			}
			if len(src[f.ID]) != 8 {
				return spatial.Bound{}, false
			}
			v[i] = math.Float64frombits(binary.LittleEndian.Uint64(src[f.ID]))
		}
		return spatial.ValidBound(spatial.Bound{MinX: v[0], MinY: v[1], MaxX: v[2], MaxY: v[3]})
	}
	if cols.Encoding != spatial.EncodingIcebergGeometry {
		return spatial.Bound{}, false
	}
	f, ok := sc.FindFieldByName(cols.Geometry)
	if !ok {
		return spatial.Bound{}, false
	}
	lo, okL := spatial.DecodeGeoPoint(lower[f.ID])
	hi, okU := spatial.DecodeGeoPoint(upper[f.ID])
	if !okL || !okU {
		return spatial.Bound{}, false
	}
	return spatial.ValidBound(spatial.Bound{MinX: lo[0], MinY: lo[1], MaxX: hi[0], MaxY: hi[1]})
}
