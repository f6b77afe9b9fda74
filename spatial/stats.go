package spatial

import (
	"encoding/binary"
	"math"

	"github.com/apache/iceberg-go"
)

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
func FileBound(sc *iceberg.Schema, cols Columns, lower, upper map[int][]byte) (Bound, bool) {
	if cols.HasBBox() {
		var v [4]float64
		for i, name := range cols.BBox {
			f, ok := sc.FindFieldByName(name)
			if !ok {
				return Bound{}, false
			}
			src := lower
			if i >= 2 {
				src = upper
			}
			if len(src[f.ID]) != 8 {
				return Bound{}, false
			}
			v[i] = math.Float64frombits(binary.LittleEndian.Uint64(src[f.ID]))
		}
		return validBound(Bound{MinX: v[0], MinY: v[1], MaxX: v[2], MaxY: v[3]})
	}
	if cols.Encoding != EncodingIcebergGeometry {
		return Bound{}, false
	}
	f, ok := sc.FindFieldByName(cols.Geometry)
	if !ok {
		return Bound{}, false
	}
	lo, okL := DecodeGeoPoint(lower[f.ID])
	hi, okU := DecodeGeoPoint(upper[f.ID])
	if !okL || !okU {
		return Bound{}, false
	}
	return validBound(Bound{MinX: lo[0], MinY: lo[1], MaxX: hi[0], MaxY: hi[1]})
}

func validBound(b Bound) (Bound, bool) {
	for _, v := range []float64{b.MinX, b.MinY, b.MaxX, b.MaxY} {
		if math.IsNaN(v) {
			return Bound{}, false
		}
	}
	return b, b.MinX <= b.MaxX && b.MinY <= b.MaxY
}

// DecodeGeoPoint decodes a geometry or geography bound (Iceberg spec
// Appendix D): little-endian float64 X, Y and, for 24 or 32 bytes, Z and M.
// Missing coordinates are NaN. It reports false for any other length.
func DecodeGeoPoint(b []byte) ([4]float64, bool) {
	p := [4]float64{math.NaN(), math.NaN(), math.NaN(), math.NaN()}
	switch len(b) {
	case 16, 24, 32:
	default:
		return p, false
	}
	for k := range len(b) / 8 {
		p[k] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*k:]))
	}
	return p, true
}
