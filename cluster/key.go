package cluster

import (
	"errors"
	"fmt"
	"math"

	"github.com/geocompact/geocompact/spatial"
)

// Keyer maps a row's bounding box to its clustering key. Rows are stored in
// ascending key order, so rows with close keys land in the same files.
type Keyer interface {
	Key(b spatial.Bound) uint64
}

// NullKey is the key of a row without a position: a null, empty or NaN
// bounding box. It is the largest uint64, so such rows sort last; keyers
// cap the keys of real positions at NullKey-1 so that the two never mix.
const NullKey uint64 = math.MaxUint64

// ErrBits reports a bits-per-axis setting outside what a 64-bit key can hold.
var ErrBits = errors.New("cluster: bits per axis out of range")

// ErrExtent reports an extent that cannot normalise coordinates: empty,
// NaN or infinite.
var ErrExtent = errors.New("cluster: invalid extent")

// OrderedFloat64 maps f to a uint64 whose unsigned order is the total order
// Iceberg and Java's Double.compare use for doubles:
//
//	-Inf < negative < -0.0 < +0.0 < positive < +Inf < NaN
//
// Every NaN, whatever its sign and payload, maps to math.MaxUint64, so all
// NaNs sort together after +Inf. Negative values have all bits inverted
// (larger magnitudes become smaller keys), non-negative values only get the
// sign bit set; this is exact in all 64 bits.
func OrderedFloat64(f float64) uint64 {
	if f != f {
		return math.MaxUint64
	}
	u := math.Float64bits(f)
	if u>>63 != 0 {
		return ^u
	}
	return u | 1<<63
}

// OrderedFloat32 is OrderedFloat64 for float32, exact in 32 bits. NaN maps
// to math.MaxUint32.
func OrderedFloat32(f float32) uint32 {
	if f != f {
		return math.MaxUint32
	}
	u := math.Float32bits(f)
	if u>>31 != 0 {
		return ^u
	}
	return u | 1<<31
}

// OrderedInt64 maps v to a uint64 with the same order: the sign bit is
// flipped, so math.MinInt64 maps to 0.
func OrderedInt64(v int64) uint64 { return uint64(v) ^ 1<<63 }

// capKey keeps a real key below NullKey.
func capKey(k uint64) uint64 {
	if k == NullKey {
		return NullKey - 1
	}
	return k
}

// axis normalises one coordinate linearly from [lo, hi] onto the cells
// 0 .. 2^bits-1. Values below lo clamp to cell 0 and values above hi to the
// last cell.
type axis struct {
	lo, scale, limit float64
	last             uint32
}

func newAxis(lo, hi float64, bits int) axis {
	cells := math.Ldexp(1, bits)
	a := axis{lo: lo, limit: cells, last: uint32(cells - 1)}
	if w := hi - lo; w > 0 && !math.IsInf(w, 0) {
		a.scale = cells / w
	}
	return a
}

// cell returns the grid cell of v; v must not be NaN.
func (a axis) cell(v float64) uint32 {
	f := (v - a.lo) * a.scale
	if !(f > 0) { // also NaN from Inf*0
		return 0
	}
	if f >= a.limit {
		return a.last
	}
	return uint32(f)
}

// grid normalises 2-D positions over an extent.
type grid struct {
	x, y axis
	bits int
}

func newGrid(extent spatial.Bound, bits int) (grid, error) {
	if bits < 1 || bits > 32 {
		return grid{}, fmt.Errorf("%w: %d bits, want 1 to 32", ErrBits, bits)
	}
	if extent.IsEmpty() || math.IsInf(extent.MinX, 0) || math.IsInf(extent.MaxX, 0) ||
		math.IsInf(extent.MinY, 0) || math.IsInf(extent.MaxY, 0) {
		return grid{}, fmt.Errorf("%w: %+v", ErrExtent, extent)
	}
	return grid{
		x:    newAxis(extent.MinX, extent.MaxX, bits),
		y:    newAxis(extent.MinY, extent.MaxY, bits),
		bits: bits,
	}, nil
}

// cells returns the grid cell of the centre of b, and false when b has no
// position (empty, NaN).
func (g grid) cells(b spatial.Bound) (x, y uint32, ok bool) {
	if b.IsEmpty() {
		return 0, 0, false
	}
	cx, cy := b.Center()
	if cx != cx || cy != cy {
		return 0, 0, false
	}
	return g.x.cell(cx), g.y.cell(cy), true
}
