package cluster

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/spatial/curve"
	"pgregory.net/rapid"

	"github.com/geocompact/geocompact/spatial"
)

// fataler is what the helpers need of a *testing.T or *rapid.T.
type fataler interface {
	Helper()
	Fatal(args ...any)
}

func mustHilbert(t fataler, order int) *Hilbert {
	t.Helper()
	h, err := NewHilbert(spatial.Bound{MaxX: 1, MaxY: 1}, order)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestHilbertMatchesReference compares the prefix-scan index with the
// textbook rotate-and-flip algorithm exhaustively on small grids and at
// random on large ones, and with gonum's Hilbert2D, which walks the same
// curve with the axes named the other way round (its v[1] is our x).
func TestHilbertMatchesReference(t *testing.T) {
	for order := 1; order <= 6; order++ {
		h := mustHilbert(t, order)
		g, err := curve.NewHilbert2D(order)
		if err != nil {
			t.Fatal(err)
		}
		n := uint32(1) << order
		for x := range n {
			for y := range n {
				got := h.Encode(x, y)
				if want := refHilbert2(order, uint64(x), uint64(y)); got != want {
					t.Fatalf("order %d: Encode(%d, %d) = %d, textbook %d", order, x, y, got, want)
				}
				if want := uint64(g.Pos([]int{int(y), int(x)})); got != want {
					t.Fatalf("order %d: Encode(%d, %d) = %d, gonum %d", order, x, y, got, want)
				}
			}
		}
	}
	edges := []uint32{0, 1, 2, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFE, 0xFFFFFFFF, 0x55555555, 0xAAAAAAAA}
	for _, order := range []int{16, 31, 32} {
		h := mustHilbert(t, order)
		mask := uint32(1<<order - 1)
		check := func(x, y uint32) {
			x, y = x&mask, y&mask
			got := h.Encode(x, y)
			if want := refHilbert2(order, uint64(x), uint64(y)); got != want {
				t.Fatalf("order %d: Encode(%#x, %#x) = %#x, textbook %#x", order, x, y, got, want)
			}
			if order < 32 { // gonum's index is an int: at most 62 bits
				g, _ := curve.NewHilbert2D(order)
				if want := uint64(g.Pos([]int{int(y), int(x)})); got != want {
					t.Fatalf("order %d: Encode(%#x, %#x) = %#x, gonum %#x", order, x, y, got, want)
				}
			}
		}
		for _, x := range edges {
			for _, y := range edges {
				check(x, y)
			}
		}
		rng := rand.New(rand.NewPCG(1, uint64(order)))
		for range 2000 {
			check(rng.Uint32(), rng.Uint32())
		}
	}
}

func TestHilbertProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		order := rapid.IntRange(1, 32).Draw(t, "order")
		h := mustHilbert(t, order)
		max := uint32(1<<order - 1)
		x := rapid.Uint32Range(0, max).Draw(t, "x")
		y := rapid.Uint32Range(0, max).Draw(t, "y")
		d := h.Encode(x, y)
		if order < 32 && d >= 1<<(2*order) {
			t.Fatalf("Encode(%d, %d) = %d, not below 1<<%d", x, y, d, 2*order)
		}
		if gx, gy := h.Decode(d); gx != x || gy != y {
			t.Fatalf("Decode(Encode(%d, %d)) = (%d, %d)", x, y, gx, gy)
		}
		// The next cell along the curve is an edge neighbour.
		if d < 1<<(2*order)-1 || order == 32 && d != NullKey {
			nx, ny := h.Decode(d + 1)
			if dist := absDiff(nx, x) + absDiff(ny, y); dist != 1 {
				t.Fatalf("cells %d (%d,%d) and %d (%d,%d) are %d apart", d, x, y, d+1, nx, ny, dist)
			}
		}
	})
}

func absDiff(a, b uint32) uint32 {
	if a > b {
		return a - b
	}
	return b - a
}

// TestHilbertND checks the n-dimensional curve: a bijection whose
// consecutive cells are neighbours, whose first 2^(n·k) cells fill an
// aligned cube of side 2^k (the recursive Hilbert structure), and which
// for two dimensions is the 2-D curve. gonum's Hilbert3D and Hilbert4D
// are other Hilbert curves (different sub-cube orientations), so they are
// checked for the same properties rather than compared cell by cell.
func TestHilbertND(t *testing.T) {
	for _, tc := range []struct{ dims, bits int }{{2, 4}, {3, 3}, {3, 4}, {4, 2}, {4, 3}} {
		t.Run(fmt.Sprintf("dims=%d,bits=%d", tc.dims, tc.bits), func(t *testing.T) {
			size := uint64(1) << (tc.dims * tc.bits)
			seen := map[string]bool{}
			prev := make([]uint32, tc.dims)
			p := make([]uint32, tc.dims)
			for d := range size {
				if err := HilbertPoint(p, tc.bits, d); err != nil {
					t.Fatal(err)
				}
				key := fmt.Sprint(p)
				if seen[key] {
					t.Fatalf("index %d revisits %v", d, p)
				}
				seen[key] = true
				got, err := HilbertIndex(p, tc.bits)
				if err != nil || got != d {
					t.Fatalf("HilbertIndex(%v) = %d, %v; want %d", p, got, err, d)
				}
				if d > 0 && manhattan(prev, p) != 1 {
					t.Fatalf("index %d at %v is not next to %v", d, p, prev)
				}
				copy(prev, p)
			}
			checkSubcubes(t, tc.dims, tc.bits, func(d uint64) []uint32 {
				q := make([]uint32, tc.dims)
				_ = HilbertPoint(q, tc.bits, d)
				return q
			})
			if tc.dims == 2 {
				for x := range uint32(1) << tc.bits {
					for y := range uint32(1) << tc.bits {
						if got, want := skilling([]uint32{x, y}, tc.bits), refHilbert2(tc.bits, uint64(x), uint64(y)); got != want {
							t.Fatalf("skilling(%d, %d) = %d, textbook %d", x, y, got, want)
						}
					}
				}
			}
		})
	}
	gonumCurves := []struct {
		dims int
		c    interface{ Coord([]int, int) []int }
	}{}
	if c, err := curve.NewHilbert3D(3); err == nil {
		gonumCurves = append(gonumCurves, struct {
			dims int
			c    interface{ Coord([]int, int) []int }
		}{3, c})
	}
	if c, err := curve.NewHilbert4D(2); err == nil {
		gonumCurves = append(gonumCurves, struct {
			dims int
			c    interface{ Coord([]int, int) []int }
		}{4, c})
	}
	for _, g := range gonumCurves {
		bits := 3
		if g.dims == 4 {
			bits = 2
		}
		checkSubcubes(t, g.dims, bits, func(d uint64) []uint32 {
			v := g.c.Coord(nil, int(d))
			q := make([]uint32, len(v))
			for i := range v {
				q[i] = uint32(v[i])
			}
			return q
		})
	}
}

func manhattan(a, b []uint32) uint32 {
	var s uint32
	for i := range a {
		s += absDiff(a[i], b[i])
	}
	return s
}

// checkSubcubes checks that each run of 2^(dims·k) consecutive cells,
// aligned on its length, covers exactly one aligned cube of side 2^k.
func checkSubcubes(t *testing.T, dims, bits int, point func(uint64) []uint32) {
	t.Helper()
	for k := 1; k < bits; k++ {
		run := uint64(1) << (dims * k)
		for start := uint64(0); start < 1<<(dims*bits); start += run {
			corner := point(start)
			for i := range corner {
				corner[i] >>= uint(k)
			}
			for d := start; d < start+run; d++ {
				p := point(d)
				for i := range p {
					if p[i]>>uint(k) != corner[i] {
						t.Fatalf("%d-D: cell %d at %v leaves the cube of run %d", dims, d, p, start/run)
					}
				}
			}
		}
	}
}

func TestHilbertKeyEdges(t *testing.T) {
	h, err := NewHilbert(spatial.Bound{MinX: -180, MinY: -90, MaxX: 180, MaxY: 90}, 16)
	if err != nil {
		t.Fatal(err)
	}
	nan := spatial.Bound{MinX: 0, MinY: 0, MaxX: 0, MaxY: 0}
	nan.MaxX = nan.MaxX / nan.MinX // NaN
	tests := []struct {
		name string
		b    spatial.Bound
		want uint64
	}{
		{"empty", spatial.EmptyBound(), NullKey},
		{"NaN", nan, NullKey},
		{"lower-left corner", spatial.Bound{MinX: -180, MinY: -90, MaxX: -180, MaxY: -90}, 0},
		{"clamped below", spatial.Bound{MinX: -500, MinY: -500, MaxX: -400, MaxY: -400}, 0},
		{"lower-right corner", spatial.Bound{MinX: 180, MinY: -90, MaxX: 180, MaxY: -90}, 1<<32 - 1},
		{"clamped right", spatial.Bound{MinX: 1e300, MinY: -1e300, MaxX: 1e300, MaxY: -1e300}, 1<<32 - 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := h.Key(tc.b); got != tc.want {
				t.Fatalf("Key(%+v) = %d, want %d", tc.b, got, tc.want)
			}
		})
	}
	if _, err := NewHilbert(spatial.EmptyBound(), 16); err == nil {
		t.Error("NewHilbert accepted an empty extent")
	}
	if _, err := NewHilbert(spatial.World, 33); err == nil {
		t.Error("NewHilbert accepted 33 bits")
	}
}

func ExampleHilbert_Key() {
	h, err := NewHilbert(spatial.Bound{MinX: 0, MinY: 0, MaxX: 4, MaxY: 4}, 2)
	if err != nil {
		panic(err)
	}
	// The centres of the 16 unit cells, row by row from the top.
	for y := 3; y >= 0; y-- {
		for x := range 4 {
			fx, fy := float64(x), float64(y)
			fmt.Printf("%3d", h.Key(spatial.Bound{MinX: fx, MinY: fy, MaxX: fx + 1, MaxY: fy + 1}))
		}
		fmt.Println()
	}
	fmt.Println(h.Key(spatial.EmptyBound()) == NullKey)
	// Output:
	//   5  6  9 10
	//   4  7  8 11
	//   3  2 13 12
	//   0  1 14 15
	// true
}
