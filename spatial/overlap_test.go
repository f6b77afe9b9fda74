package spatial

import (
	"math"
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
