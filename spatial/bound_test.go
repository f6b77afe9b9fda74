package spatial_test

import (
	"math"
	"testing"

	"github.com/geocompact/geocompact/spatial"
)

func TestBoundExtendAndIntersects(t *testing.T) {
	b := spatial.EmptyBound()
	if !b.IsEmpty() {
		t.Fatal("EmptyBound is not empty")
	}
	b = b.ExtendPoint(1, 2).ExtendPoint(3, -1).ExtendPoint(math.NaN(), 5)
	want := spatial.Bound{MinX: 1, MinY: -1, MaxX: 3, MaxY: 2}
	if b != want {
		t.Fatalf("got %+v, want %+v", b, want)
	}
	tests := []struct {
		name string
		o    spatial.Bound
		want bool
	}{
		{"inside", spatial.Bound{MinX: 2, MinY: 0, MaxX: 2.5, MaxY: 1}, true},
		{"touching edge", spatial.Bound{MinX: 3, MinY: 2, MaxX: 4, MaxY: 3}, true},
		{"disjoint", spatial.Bound{MinX: 3.1, MinY: 0, MaxX: 4, MaxY: 1}, false},
		{"empty", spatial.EmptyBound(), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := b.Intersects(tc.o); got != tc.want {
				t.Fatalf("Intersects(%+v) = %v, want %v", tc.o, got, tc.want)
			}
		})
	}
}
