package cluster

import "github.com/geocompact/geocompact/spatial"

// Linear orders boxes by the grid cell of their lower-left corner, x first
// and y second: the classic "bbox_minx, bbox_miny" sort, quantised to the
// grid. Rows fall into narrow vertical strips, which prunes well when a
// table has only a few dozen files.
type Linear struct {
	g     grid
	shift uint
}

var _ Keyer = (*Linear)(nil)

// NewLinear returns the linear keyer over extent with order bits per axis
// (1 to 32). Boxes outside the extent clamp to its edge.
func NewLinear(extent spatial.Bound, order int) (*Linear, error) {
	g, err := newGrid(extent, order)
	if err != nil {
		return nil, err
	}
	return &Linear{g: g, shift: uint(order)}, nil
}

// Key returns x<<order | y for the cell of b's lower-left corner, or
// NullKey when b is empty or NaN.
func (l *Linear) Key(b spatial.Bound) uint64 {
	if b.IsEmpty() {
		return NullKey
	}
	return capKey(uint64(l.g.x.cell(b.MinX))<<l.shift | uint64(l.g.y.cell(b.MinY)))
}
