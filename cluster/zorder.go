package cluster

import "github.com/geocompact/geocompact/spatial"

// ZOrder orders boxes by the Morton (Z-order) code of their centre's grid
// cell: the bits of x and y interleaved, x in the higher bit of each pair.
// It is cheaper than Hilbert but jumps between distant cells at every
// power-of-two boundary, so its runs of keys are less compact.
type ZOrder struct {
	g     grid
	shift uint
}

var _ Keyer = (*ZOrder)(nil)

// NewZOrder returns the Z-order keyer over extent with order bits per axis
// (1 to 32). Boxes outside the extent clamp to its edge.
func NewZOrder(extent spatial.Bound, order int) (*ZOrder, error) {
	g, err := newGrid(extent, order)
	if err != nil {
		return nil, err
	}
	return &ZOrder{g: g, shift: uint(32 - order)}, nil
}

// Key returns the Morton code of the centre of b, below 1<<(2*order), or
// NullKey when b is empty or NaN.
func (z *ZOrder) Key(b spatial.Bound) uint64 {
	x, y, ok := z.g.cells(b)
	if !ok {
		return NullKey
	}
	return capKey(z.Encode(x, y))
}

// Encode returns the Morton code of grid cell (x, y). It is monotone in
// each axis: x1 <= x2 and y1 <= y2 imply Encode(x1, y1) <= Encode(x2, y2).
func (z *ZOrder) Encode(x, y uint32) uint64 { return spread(uint64(x))<<1 | spread(uint64(y)) }

// Decode returns the grid cell whose Morton code is d.
func (z *ZOrder) Decode(d uint64) (x, y uint32) { return compact(d >> 1), compact(d) }

// Interleave returns the Morton code of the point p with bits bits per
// coordinate: bit b of p[0] is the most significant of each group of
// len(p) bits. len(p)*bits must be at most 64.
func Interleave(p []uint32, bits int) (uint64, error) {
	if err := checkDims(len(p), bits); err != nil {
		return 0, err
	}
	return interleaveN(p, bits), nil
}

// Deinterleave is the inverse of Interleave: it writes the point of code d
// into p.
func Deinterleave(p []uint32, bits int, d uint64) error {
	if err := checkDims(len(p), bits); err != nil {
		return err
	}
	clear(p)
	n := len(p)
	pos := n*bits - 1
	for b := bits - 1; b >= 0; b-- {
		for i := range n {
			p[i] |= uint32(d>>uint(pos)&1) << uint(b)
			pos--
		}
	}
	return nil
}

func interleaveN(p []uint32, bits int) uint64 {
	if len(p) == 2 {
		return spread(uint64(p[0]))<<1 | spread(uint64(p[1]))
	}
	var d uint64
	for b := bits - 1; b >= 0; b-- {
		for _, v := range p {
			d = d<<1 | uint64(v>>uint(b)&1)
		}
	}
	return d
}
