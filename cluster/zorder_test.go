package cluster

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/geocompact/geocompact/spatial"
)

func TestZOrderProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		order := rapid.IntRange(1, 32).Draw(t, "order")
		z, err := NewZOrder(spatial.Bound{MaxX: 1, MaxY: 1}, order)
		if err != nil {
			t.Fatal(err)
		}
		max := uint32(1<<order - 1)
		x1 := rapid.Uint32Range(0, max).Draw(t, "x1")
		y1 := rapid.Uint32Range(0, max).Draw(t, "y1")
		x2 := rapid.Uint32Range(x1, max).Draw(t, "x2")
		y2 := rapid.Uint32Range(y1, max).Draw(t, "y2")
		d1, d2 := z.Encode(x1, y1), z.Encode(x2, y2)
		if d1 > d2 {
			t.Fatalf("not monotone: (%d,%d) -> %d but (%d,%d) -> %d", x1, y1, d1, x2, y2, d2)
		}
		if order < 32 && d2 >= 1<<(2*order) {
			t.Fatalf("Encode(%d, %d) = %d, not below 1<<%d", x2, y2, d2, 2*order)
		}
		if gx, gy := z.Decode(d1); gx != x1 || gy != y1 {
			t.Fatalf("Decode(Encode(%d, %d)) = (%d, %d)", x1, y1, gx, gy)
		}
		// The n-dimensional interleave agrees and round-trips.
		dims := rapid.IntRange(2, 4).Draw(t, "dims")
		bits := rapid.IntRange(1, 64/dims).Draw(t, "bits")
		p := make([]uint32, dims)
		for i := range p {
			p[i] = rapid.Uint32Range(0, uint32(1<<bits-1)).Draw(t, "p")
		}
		code, err := Interleave(p, bits)
		if err != nil {
			t.Fatal(err)
		}
		if dims == 2 && bits == 32 && code != z.Encode(p[0], p[1]) && order == 32 {
			t.Fatalf("Interleave(%v) = %d, Encode %d", p, code, z.Encode(p[0], p[1]))
		}
		q := make([]uint32, dims)
		if err := Deinterleave(q, bits, code); err != nil {
			t.Fatal(err)
		}
		for i := range p {
			if p[i] != q[i] {
				t.Fatalf("Deinterleave(Interleave(%v)) = %v", p, q)
			}
		}
	})
}

func TestZOrderAndLinearKeys(t *testing.T) {
	ext := spatial.Bound{MinX: 0, MinY: 0, MaxX: 4, MaxY: 4}
	z, err := NewZOrder(ext, 2)
	if err != nil {
		t.Fatal(err)
	}
	l, err := NewLinear(ext, 2)
	if err != nil {
		t.Fatal(err)
	}
	box := func(x, y float64) spatial.Bound { return spatial.Bound{MinX: x, MinY: y, MaxX: x + 1, MaxY: y + 1} }
	tests := []struct {
		name       string
		b          spatial.Bound
		zkey, lkey uint64
	}{
		{"origin", box(0, 0), 0, 0},
		{"x=1", box(1, 0), 2, 4},
		{"y=1", box(0, 1), 1, 1},
		{"top right", box(3, 3), 15, 15},
		{"clamped", box(100, -100), 10, 12},
		{"empty", spatial.EmptyBound(), NullKey, NullKey},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := z.Key(tc.b); got != tc.zkey {
				t.Errorf("zorder Key = %d, want %d", got, tc.zkey)
			}
			if got := l.Key(tc.b); got != tc.lkey {
				t.Errorf("linear Key = %d, want %d", got, tc.lkey)
			}
		})
	}
}
