package spatial

import (
	"math"
	"slices"
)

// MaxDepth returns the largest number of boxes (closed) that share one
// point of the plane; 0 for none. Empty boxes cover nothing. Closed boxes
// that share a point all contain the corner (max minx, max miny) of their
// intersection, so only the points (minx_i, miny_j) need checking: for
// each box's minx it sweeps, along y, the boxes spanning that x. It costs
// O(n² log n) for n boxes.
func MaxDepth(boxes []Bound) int {
	type event struct {
		y     float64
		delta int
	}
	best := 0
	events := make([]event, 0, 2*len(boxes))
	for _, f := range boxes {
		if f.IsEmpty() {
			continue
		}
		x := f.MinX
		events = events[:0]
		for _, g := range boxes {
			if !g.IsEmpty() && g.MinX <= x && x <= g.MaxX {
				events = append(events, event{g.MinY, +1}, event{g.MaxY, -1})
			}
		}
		// Openings sort before closings at the same y: closed intervals
		// that touch share a point.
		slices.SortFunc(events, func(a, b event) int {
			if a.y != b.y {
				if a.y < b.y {
					return -1
				}
				return 1
			}
			return b.delta - a.delta
		})
		depth := 0
		for _, e := range events {
			depth += e.delta
			best = max(best, depth)
		}
	}
	return best
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
	var sum, n int
	for _, b := range boxes {
		x, y := b.Center()
		if b.IsEmpty() || math.IsNaN(x) || math.IsNaN(y) || math.IsInf(x, 0) || math.IsInf(y, 0) {
			continue
		}
		for _, g := range boxes {
			if g.Contains(x, y) {
				sum++
			}
		}
		n++
	}
	if n == 0 {
		return 0
	}
	return float64(sum) / float64(n)
}
