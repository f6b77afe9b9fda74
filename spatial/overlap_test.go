package spatial

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestOverlapDepth(t *testing.T) {
	box := func(minx, miny, maxx, maxy float64) Bound {
		return Bound{MinX: minx, MinY: miny, MaxX: maxx, MaxY: maxy}
	}
	everywhere := Bound{MinX: math.Inf(-1), MinY: math.Inf(-1), MaxX: math.Inf(1), MaxY: math.Inf(1)}
	tests := []struct {
		name     string
		boxes    []Bound
		mean     float64
		maxDepth int
	}{
		{"none", nil, 0, 0},
		{"tiles touching", []Bound{box(0, 0, 1, 1), box(1, 0, 2, 1), box(0, 1, 1, 2), box(1, 1, 2, 2)}, 1, 4},
		{"tiles apart", []Bound{box(0, 0, 1, 1), box(2, 0, 3, 1)}, 1, 1},
		{"stacked", []Bound{box(0, 0, 4, 4), box(0, 0, 4, 4), box(1, 1, 3, 3)}, 3, 3},
		{"one wide over tiles", []Bound{box(0, 0, 1, 1), box(2, 0, 3, 1), box(0, 0, 3, 1)}, 5.0 / 3, 2},
		{"empty boxes cover nothing", []Bound{box(0, 0, 1, 1), EmptyBound()}, 1, 1},
		{"a file without statistics covers every centre", []Bound{box(0, 0, 1, 1), box(2, 0, 3, 1), everywhere}, 2, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.InDelta(t, tc.mean, MeanDepth(tc.boxes), 1e-9)
			assert.Equal(t, tc.maxDepth, MaxDepth(tc.boxes))
		})
	}
}

// bruteMaxDepth checks every point (minx_i, miny_j): closed boxes sharing
// a point all contain the corner (max minx, max miny) of their
// intersection.
func bruteMaxDepth(boxes []Bound) int {
	best := 0
	for _, a := range boxes {
		for _, b := range boxes {
			n := 0
			for _, g := range boxes {
				if !g.IsEmpty() && g.Contains(a.MinX, b.MinY) {
					n++
				}
			}
			best = max(best, n)
		}
	}
	return best
}

func TestMaxDepthMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := range 60 {
		boxes := gridBoxes(rng, n)
		assert.Equal(t, bruteMaxDepth(boxes), MaxDepth(boxes), "%d boxes: %v", n, boxes)
	}
}

func TestMeanDepthMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for n := range 60 {
		boxes := gridBoxes(rng, n)
		sum, m := 0, 0
		for _, b := range boxes {
			x, y := b.Center()
			m++
			for _, g := range boxes {
				if g.Contains(x, y) {
					sum++
				}
			}
		}
		want := 0.0
		if m > 0 {
			want = float64(sum) / float64(m)
		}
		assert.InDelta(t, want, MeanDepth(boxes), 1e-9, "%d boxes: %v", n, boxes)
	}
}

// gridBoxes draws n boxes on a coarse grid, where touching and shared
// edges are common.
func gridBoxes(rng *rand.Rand, n int) []Bound {
	boxes := make([]Bound, n)
	for i := range boxes {
		x, y := float64(rng.IntN(10)), float64(rng.IntN(10))
		boxes[i] = Bound{MinX: x, MinY: y, MaxX: x + float64(rng.IntN(4)), MaxY: y + float64(rng.IntN(4))}
	}
	return boxes
}
