package cluster

import (
	"fmt"

	"github.com/geocompact/geocompact/spatial"
)

// Hilbert orders boxes by the position of their centre along a 2-D Hilbert
// curve over a grid of 2^order × 2^order cells laid over an extent. Of the
// curves here it keeps nearby rows together best: consecutive cells are
// always edge neighbours, so a run of keys covers a compact region.
//
// The curve starts at cell (0, 0) (the extent's lower-left corner) and ends
// at cell (2^order-1, 0) (the lower-right one); in the first quadrant it
// runs up the y axis.
type Hilbert struct {
	g     grid
	shift uint // 32 - order
}

var _ Keyer = (*Hilbert)(nil)

// NewHilbert returns the Hilbert keyer over extent with order bits per axis
// (1 to 32). Boxes outside the extent clamp to its edge.
func NewHilbert(extent spatial.Bound, order int) (*Hilbert, error) {
	g, err := newGrid(extent, order)
	if err != nil {
		return nil, err
	}
	return &Hilbert{g: g, shift: uint(32 - order)}, nil
}

// Key returns the Hilbert index of the centre of b, below 1<<(2*order), or
// NullKey when b is empty or NaN.
func (h *Hilbert) Key(b spatial.Bound) uint64 {
	x, y, ok := h.g.cells(b)
	if !ok {
		return NullKey
	}
	return capKey(h.Encode(x, y))
}

// Encode returns the Hilbert index of grid cell (x, y); both must be below
// 1<<order.
func (h *Hilbert) Encode(x, y uint32) uint64 {
	return hilbert2(x<<h.shift, y<<h.shift) >> (2 * h.shift)
}

// Decode returns the grid cell whose Hilbert index is d. It is the inverse
// of Encode.
func (h *Hilbert) Decode(d uint64) (x, y uint32) {
	x, y = hilbert2Decode(d << (2 * h.shift))
	return x >> h.shift, y >> h.shift
}

// Bit-plane masks for the 32 levels of a 2-D index. Level i (0 is the most
// significant) lives in bit 31-i, so even levels are the odd bits.
const (
	oddBits  = 0xAAAAAAAA // even levels
	evenBits = 0x55555555 // odd levels
)

// hilbert2 returns the index of (x, y) on the 2-D Hilbert curve of order 32
// without branches or loops.
//
// Walking the levels from the top, the classic algorithm keeps a state
// st = (s, c): whether x and y are swapped and whether both are
// complemented. At a level where x and y differ the state is swapped and
// complemented when the transformed y bit is 0; where they are equal, s
// flips when their bit equals c. Both transitions are affine maps
// st' = L·st + v over GF(2)^2, with L a transvection (equal bits) or the
// swap (different bits). Rewriting the state of odd levels in a swapped
// basis (w = S^(i mod 2)·st) makes every L one of 1, ω, ω² when GF(2)^2 is
// read as GF(4) = {s + c·ω}: the identity where the bits differ, ω (even
// levels) or ω² (odd levels) where they are equal. Affine maps over GF(4)
// compose cheaply (multiply the slopes, map the offsets), and the state at
// every level is the composition of the maps above it applied to zero, so
// a Hillis–Steele prefix scan over the 32 bit positions yields all 32 states
// in five rounds of word-wide AND and XOR. Each bit position holds one map:
// slope a + b·ω, offset u0 + u1·ω.
func hilbert2(x, y uint32) uint64 {
	// The planes are uint32 so that the masks are immediate operands.
	e := x ^ y                // levels where the bits differ; also the low digit bit
	ne := ^e                  // levels where they are equal
	a := e | ne&evenBits      // slope: 1 where different, ω² on odd levels
	b := ne                   // ω on even levels, ω² on odd ones
	u0 := ^y & (e | evenBits) // offsets are ~y (= ~x where equal)
	u1 := ^y & (e | oddBits)

	// Inclusive prefix scan: position p composes with the maps k levels
	// above it (k bits higher). Shifted-in zeros are the zero slope with a
	// zero offset, which leaves offsets unchanged, so the top needs no fill.
	// Unrolled: constant shifts compile to single instructions.
	ao, bo, u0o, u1o := a>>1, b>>1, u0>>1, u1>>1
	u0, u1 = u0^(a&u0o)^(b&u1o), u1^(a&u1o)^(b&(u0o^u1o))
	a, b = (a&ao)^(b&bo), (a&bo)^(b&(ao^bo))
	ao, bo, u0o, u1o = a>>2, b>>2, u0>>2, u1>>2
	u0, u1 = u0^(a&u0o)^(b&u1o), u1^(a&u1o)^(b&(u0o^u1o))
	a, b = (a&ao)^(b&bo), (a&bo)^(b&(ao^bo))
	ao, bo, u0o, u1o = a>>4, b>>4, u0>>4, u1>>4
	u0, u1 = u0^(a&u0o)^(b&u1o), u1^(a&u1o)^(b&(u0o^u1o))
	a, b = (a&ao)^(b&bo), (a&bo)^(b&(ao^bo))
	ao, bo, u0o, u1o = a>>8, b>>8, u0>>8, u1>>8
	u0, u1 = u0^(a&u0o)^(b&u1o), u1^(a&u1o)^(b&(u0o^u1o))
	a, b = (a&ao)^(b&bo), (a&bo)^(b&(ao^bo))
	u0o, u1o = u0>>16, u1>>16 // the last round needs only the offsets
	u0, u1 = u0^(a&u0o)^(b&u1o), u1^(a&u1o)^(b&(u0o^u1o))

	// The state entering level i is the inclusive result of level i-1.
	w0, w1 := u0>>1, u1>>1
	s := w0&oddBits | w1&evenBits // undo the basis change on odd levels
	c := w1&oddBits | w0&evenBits
	hi := x ^ s&e ^ c // the transformed x bit
	return zip(hi, e)
}

// zip interleaves hi and lo: bit i of hi goes to bit 2i+1, bit i of lo to
// bit 2i. It is an outer perfect shuffle of the 64-bit word hi:lo.
func zip(hi, lo uint32) uint64 {
	v := uint64(hi)<<32 | uint64(lo)
	t := (v ^ v>>16) & 0x00000000FFFF0000
	v ^= t ^ t<<16
	t = (v ^ v>>8) & 0x0000FF000000FF00
	v ^= t ^ t<<8
	t = (v ^ v>>4) & 0x00F000F000F000F0
	v ^= t ^ t<<4
	t = (v ^ v>>2) & 0x0C0C0C0C0C0C0C0C
	v ^= t ^ t<<2
	t = (v ^ v>>1) & 0x2222222222222222
	v ^= t ^ t<<1
	return v
}

// hilbert2Decode inverts hilbert2 by walking the 32 levels.
func hilbert2Decode(d uint64) (x, y uint32) {
	var s, c uint32
	for i := 31; i >= 0; i-- {
		digit := uint32(d>>(2*uint(i))) & 3
		xt := digit >> 1
		yt := xt ^ digit&1
		// Undo the state: complement, then swap (they commute).
		xb, yb := xt^c, yt^c
		if s == 1 {
			xb, yb = yb, xb
		}
		x |= xb << uint(i)
		y |= yb << uint(i)
		if yt == 0 {
			s ^= 1
			c ^= xt
		}
	}
	return x, y
}

// spread moves bit i of the low 32 bits of v to bit 2i.
func spread(v uint64) uint64 {
	v = (v | v<<16) & 0x0000FFFF0000FFFF
	v = (v | v<<8) & 0x00FF00FF00FF00FF
	v = (v | v<<4) & 0x0F0F0F0F0F0F0F0F
	v = (v | v<<2) & 0x3333333333333333
	v = (v | v<<1) & 0x5555555555555555
	return v
}

// compact is the inverse of spread: it gathers the even bits of v.
func compact(v uint64) uint32 {
	v &= 0x5555555555555555
	v = (v | v>>1) & 0x3333333333333333
	v = (v | v>>2) & 0x0F0F0F0F0F0F0F0F
	v = (v | v>>4) & 0x00FF00FF00FF00FF
	v = (v | v>>8) & 0x0000FFFF0000FFFF
	v = (v | v>>16) & 0x00000000FFFFFFFF
	return uint32(v)
}

// HilbertIndex returns the index of the point p (one coordinate per
// dimension, each below 1<<bits) on the len(p)-dimensional Hilbert curve,
// using Skilling's transpose method ("Programming the Hilbert curve", AIP
// Conf. Proc. 707, 2004). len(p)*bits must be at most 64 and len(p) at
// least 2. For two dimensions the curve is the one of [Hilbert.Encode].
func HilbertIndex(p []uint32, bits int) (uint64, error) {
	if err := checkDims(len(p), bits); err != nil {
		return 0, err
	}
	var buf [4]uint32
	var x []uint32
	if len(p) <= len(buf) {
		x = buf[:len(p)]
	} else {
		x = make([]uint32, len(p))
	}
	copy(x, p)
	return hilbertN(x, bits), nil
}

// HilbertPoint is the inverse of HilbertIndex: it writes the point whose
// index is d into p (whose length gives the dimensions).
func HilbertPoint(p []uint32, bits int, d uint64) error {
	if err := checkDims(len(p), bits); err != nil {
		return err
	}
	hilbertNDecode(p, bits, d)
	return nil
}

func checkDims(n, bits int) error {
	if n < 2 || bits < 1 || n*bits > 64 || bits > 32 {
		return fmt.Errorf("%w: %d dimensions of %d bits, want 2 or more dimensions and at most 64 bits in all", ErrBits, n, bits)
	}
	return nil
}

// hilbertN computes the index of x in place (x is clobbered). For two
// dimensions it defers to hilbert2 so that both paths give one curve.
func hilbertN(x []uint32, bits int) uint64 {
	if len(x) == 2 {
		sh := uint(32 - bits)
		return hilbert2(x[0]<<sh, x[1]<<sh) >> (2 * sh)
	}
	return skilling(x, bits)
}

// skilling computes the index of x on the n-dimensional Hilbert curve by
// Skilling's transpose method, clobbering x.
func skilling(x []uint32, bits int) uint64 {
	n := len(x)
	// Inverse undo: turn the axes into the transposed index.
	for b := bits - 1; b > 0; b-- {
		p := uint32(1)<<uint(b) - 1
		for i := range n {
			undo(x, i, b, p)
		}
	}
	// Gray encode.
	for i := 1; i < n; i++ {
		x[i] ^= x[i-1]
	}
	var t uint32
	for b := bits - 1; b > 0; b-- {
		t ^= (uint32(1)<<uint(b) - 1) & (0 - (x[n-1] >> uint(b) & 1))
	}
	for i := range n {
		x[i] ^= t
	}
	// Interleave the transpose: bit b of x[0] is the most significant.
	var d uint64
	for b := bits - 1; b >= 0; b-- {
		for i := range n {
			d = d<<1 | uint64(x[i]>>uint(b)&1)
		}
	}
	return d
}

// hilbertNDecode writes the point of index d into x.
func hilbertNDecode(x []uint32, bits int, d uint64) {
	if len(x) == 2 {
		sh := uint(32 - bits)
		x[0], x[1] = hilbert2Decode(d << (2 * sh))
		x[0] >>= sh
		x[1] >>= sh
		return
	}
	skillingDecode(x, bits, d)
}

// undo is the step both directions of Skilling's method share: when bit
// b of x[i] is set, invert the low bits of x[0]; otherwise exchange the
// low bits of x[0] and x[i]. It is branch-free, because the bits are
// random and a mispredicted branch costs more than both arms.
func undo(x []uint32, i, b int, low uint32) {
	set := 0 - (x[i] >> uint(b) & 1) // all ones when the bit is set
	x[0] ^= low & set
	t := (x[0] ^ x[i]) & low &^ set
	x[0] ^= t
	x[i] ^= t
}

// skillingDecode is the inverse of skilling.
func skillingDecode(x []uint32, bits int, d uint64) {
	n := len(x)
	clear(x)
	pos := n*bits - 1
	for b := bits - 1; b >= 0; b-- {
		for i := range n {
			x[i] |= uint32(d>>uint(pos)&1) << uint(b)
			pos--
		}
	}
	// Gray decode.
	t := x[n-1] >> 1
	for i := n - 1; i > 0; i-- {
		x[i] ^= x[i-1]
	}
	x[0] ^= t
	// Undo excess work.
	for b := 1; b < bits; b++ {
		p := uint32(1)<<uint(b) - 1
		for i := n - 1; i >= 0; i-- {
			undo(x, i, b, p)
		}
	}
}
