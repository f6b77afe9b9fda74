package spatial

import (
	"encoding/binary"
	"math"
)

// ValidBound returns b and whether it is a usable bound: no NaN, not
// inverted.
func ValidBound(b Bound) (Bound, bool) {
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
