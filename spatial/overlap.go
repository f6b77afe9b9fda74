package spatial

import (
	"cmp"
	"math"
	"slices"
)

// MaxDepth returns the largest number of boxes (closed) that share one
// point of the plane; 0 for none. Empty boxes cover nothing. It sweeps x:
// at each box's minx its y interval is added, at its maxx removed (adds
// first at equal x, as touching closed boxes share a point), and a segment
// tree over the boxes' distinct y values keeps the deepest y. It costs
// O(n log n) for n boxes.
func MaxDepth(boxes []Bound) int {
	type event struct {
		x      float64
		delta  int
		lo, hi int // y interval, as indexes into ys
	}
	var ys []float64
	for _, b := range boxes {
		if !b.IsEmpty() {
			ys = append(ys, b.MinY, b.MaxY)
		}
	}
	if len(ys) == 0 {
		return 0
	}
	slices.Sort(ys)
	ys = slices.Compact(ys)
	index := func(y float64) int { i, _ := slices.BinarySearch(ys, y); return i }
	events := make([]event, 0, len(ys))
	for _, b := range boxes {
		if !b.IsEmpty() {
			lo, hi := index(b.MinY), index(b.MaxY)
			events = append(events, event{b.MinX, +1, lo, hi}, event{b.MaxX, -1, lo, hi})
		}
	}
	slices.SortFunc(events, func(a, b event) int { return cmp.Or(cmp.Compare(a.x, b.x), b.delta-a.delta) })
	t := newMaxTree(len(ys))
	best := 0
	for _, e := range events {
		t.add(1, 0, len(ys)-1, e.lo, e.hi, e.delta)
		best = max(best, t.max[1])
	}
	return best
}

// maxTree is a segment tree over n points with range add and a running
// maximum: max[k] is the largest value in node k's range, pending[k] what
// was added to all of it.
type maxTree struct{ max, pending []int }

func newMaxTree(n int) *maxTree {
	return &maxTree{max: make([]int, 4*n), pending: make([]int, 4*n)}
}

// add adds d to the points [lo, hi] within node k, which covers [l, r].
func (t *maxTree) add(k, l, r, lo, hi, d int) {
	if hi < l || r < lo {
		return
	}
	if lo <= l && r <= hi {
		t.max[k] += d
		t.pending[k] += d
		return
	}
	m := (l + r) / 2
	t.add(2*k, l, m, lo, hi, d)
	t.add(2*k+1, m+1, r, lo, hi, d)
	t.max[k] = max(t.max[2*k], t.max[2*k+1]) + t.pending[k]
}

// MeanDepth returns the mean, over the boxes with a finite centre, of the
// number of boxes that contain that centre: how many files a point query
// at the middle of a file plans. It is 1 for boxes that tile the plane
// without overlapping (touching edges do not reach a neighbour's centre)
// and n for n boxes that all cover the same area; 0 for no boxes. An
// infinite box (a file without statistics) covers every centre but has
// none of its own. It needs no rows, only the boxes (for files: their
// statistics).
func MeanDepth(boxes []Bound) float64 {
	// Sweep x: a box's y interval is counted from its minx to its maxx
	// (inclusive: at equal x, adds, then centre queries, then removals),
	// and a centre's depth is the count at its y, in a Fenwick tree of
	// range adds over the distinct y values.
	type event struct {
		x    float64
		kind int // 0 add, 1 query, 2 remove
		lo   int // y index (the query's y)
		hi   int
	}
	var ys []float64
	var centres [][2]float64
	for _, b := range boxes {
		if b.IsEmpty() {
			continue
		}
		ys = append(ys, b.MinY, b.MaxY)
		if x, y := b.Center(); !math.IsNaN(x) && !math.IsNaN(y) && !math.IsInf(x, 0) && !math.IsInf(y, 0) {
			centres = append(centres, [2]float64{x, y})
			ys = append(ys, y)
		}
	}
	if len(centres) == 0 {
		return 0
	}
	slices.Sort(ys)
	ys = slices.Compact(ys)
	index := func(y float64) int { i, _ := slices.BinarySearch(ys, y); return i }
	var events []event
	for _, b := range boxes {
		if !b.IsEmpty() {
			lo, hi := index(b.MinY), index(b.MaxY)
			events = append(events, event{b.MinX, 0, lo, hi}, event{b.MaxX, 2, lo, hi})
		}
	}
	for _, c := range centres {
		events = append(events, event{c[0], 1, index(c[1]), 0})
	}
	slices.SortFunc(events, func(a, b event) int { return cmp.Or(cmp.Compare(a.x, b.x), a.kind-b.kind) })
	fw := make([]int, len(ys)+2) // Fenwick tree of differences, 1-based
	addFrom := func(i, d int) {
		for i++; i < len(fw); i += i & -i {
			fw[i] += d
		}
	}
	sum := 0
	for _, e := range events {
		switch e.kind {
		case 0, 2:
			d := 1
			if e.kind == 2 {
				d = -1
			}
			addFrom(e.lo, d)
			addFrom(e.hi+1, -d)
		case 1:
			for i := e.lo + 1; i > 0; i -= i & -i {
				sum += fw[i]
			}
		}
	}
	return float64(sum) / float64(len(centres))
}
