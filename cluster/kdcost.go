package cluster

import (
	"math"
	"slices"

	"github.com/geocompact/geocompact/spatial"
)

// kd's cost model. A window meets a file's box exactly when the window's
// centre lies in the box grown by half the window's width and height, so
// the number of windows of one size that meet a box is the number of
// window centres in the grown box. kd counts it on a summed-area grid of
// the centres: for data-placed windows (the default) the centres are
// every sampled row, a window centred on each; for the user's windows,
// their own centres, with their median size. A count is four look-ups,
// whatever the number of windows.

// kdGridCells is the number of cells of a cost grid along each axis.
const kdGridCells = 512

// kdGrid counts points in boxes: cum[j*(n+1)+i] is the number of points
// in the cells left of column i and below row j.
type kdGrid struct {
	minX, minY, cw, ch float64
	n                  int
	cum                []float64
}

// newKDGrid counts the points xs, ys (paired) into a grid over their own
// extent.
func newKDGrid(xs, ys []float64) *kdGrid {
	box := spatial.EmptyBound()
	for i := range xs {
		box = box.ExtendPoint(xs[i], ys[i])
	}
	n := kdGridCells
	g := &kdGrid{minX: box.MinX, minY: box.MinY, n: n, cum: make([]float64, (n+1)*(n+1))}
	g.cw = max(box.Width(), 1e-12) / float64(n)
	g.ch = max(box.Height(), 1e-12) / float64(n)
	for i := range xs {
		cx := min(n-1, max(0, int((xs[i]-g.minX)/g.cw)))
		cy := min(n-1, max(0, int((ys[i]-g.minY)/g.ch)))
		g.cum[(cy+1)*(n+1)+cx+1]++
	}
	for j := 1; j <= n; j++ {
		for i := 1; i <= n; i++ {
			k := j*(n+1) + i
			g.cum[k] += g.cum[k-1] + g.cum[k-n-1] - g.cum[k-n-2]
		}
	}
	return g
}

// below is the number of points left of x and below y, taking the points
// of a cell as spread evenly over it (bilinear in the summed areas).
func (g *kdGrid) below(x, y float64) float64 {
	fx := min(float64(g.n), max(0, (x-g.minX)/g.cw))
	fy := min(float64(g.n), max(0, (y-g.minY)/g.ch))
	i, j := min(g.n-1, int(fx)), min(g.n-1, int(fy))
	tx, ty := fx-float64(i), fy-float64(j)
	w := g.n + 1
	c00, c10 := g.cum[j*w+i], g.cum[j*w+i+1]
	c01, c11 := g.cum[(j+1)*w+i], g.cum[(j+1)*w+i+1]
	return (1-ty)*((1-tx)*c00+tx*c10) + ty*((1-tx)*c01+tx*c11)
}

// count is the number of points in b.
func (g *kdGrid) count(b spatial.Bound) float64 {
	return g.below(b.MaxX, b.MaxY) - g.below(b.MinX, b.MaxY) - g.below(b.MaxX, b.MinY) + g.below(b.MinX, b.MinY)
}

// kdWindowSet is one set of windows of one size: the grid of their
// centres and half their width and height.
type kdWindowSet struct {
	grid   *kdGrid
	hw, hh float64
}

// meets is the number of the set's windows that meet box.
func (s kdWindowSet) meets(box spatial.Bound) float64 {
	return s.grid.count(spatial.Bound{MinX: box.MinX - s.hw, MinY: box.MinY - s.hh, MaxX: box.MaxX + s.hw, MaxY: box.MaxY + s.hh})
}

// kdDataSets are data-placed windows of each of KDAreas of extent (the
// points' own extent when empty), one centred on every point.
func kdDataSets(xs, ys []float64, extent spatial.Bound) []kdWindowSet {
	if extent.IsEmpty() {
		for i := range xs {
			extent = extent.ExtendPoint(xs[i], ys[i])
		}
	}
	g := newKDGrid(xs, ys)
	var out []kdWindowSet
	for _, a := range KDAreas {
		side := math.Sqrt(a)
		out = append(out, kdWindowSet{grid: g, hw: extent.Width() * side / 2, hh: extent.Height() * side / 2})
	}
	return out
}

// kdGivenSet is the window set ws: its centres, with the median width and
// height of its windows (empty windows are skipped). ok is false when no
// window is left.
func kdGivenSet(ws []spatial.Bound) (kdWindowSet, bool) {
	var xs, ys, w, h []float64
	for _, b := range ws {
		if b.IsEmpty() {
			continue
		}
		cx, cy := b.Center()
		xs, ys = append(xs, cx), append(ys, cy)
		w, h = append(w, b.Width()), append(h, b.Height())
	}
	if len(xs) == 0 {
		return kdWindowSet{}, false
	}
	slices.Sort(w)
	slices.Sort(h)
	return kdWindowSet{grid: newKDGrid(xs, ys), hw: w[len(w)/2] / 2, hh: h[len(h)/2] / 2}, true
}
