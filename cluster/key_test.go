package cluster

import (
	"math"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// javaCompare is Double.compare: -0.0 < 0.0 and NaN above everything,
// all NaNs equal.
func javaCompare(a, b float64) int {
	switch {
	case math.IsNaN(a) && math.IsNaN(b):
		return 0
	case math.IsNaN(a):
		return 1
	case math.IsNaN(b):
		return -1
	case a < b:
		return -1
	case a > b:
		return 1
	case a == 0 && b == 0:
		sa, sb := math.Signbit(a), math.Signbit(b)
		if sa && !sb {
			return -1
		}
		if !sa && sb {
			return 1
		}
	}
	return 0
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

var specialFloats = []float64{
	math.Inf(-1), -math.MaxFloat64, -1, -math.SmallestNonzeroFloat64, math.Copysign(0, -1), 0,
	math.SmallestNonzeroFloat64, 1, math.MaxFloat64, math.Inf(1), math.NaN(),
	math.Float64frombits(0xFFF8000000000001), // negative NaN with a payload
	math.Float64frombits(0x7FF0000000000001), // signalling NaN
	-2.5e-310, 2.5e-310, 1 << 53, -(1 << 53), 0x1p-1022,
}

func TestOrderedFloat64(t *testing.T) {
	for _, a := range specialFloats {
		for _, b := range specialFloats {
			if got, want := cmpU64(OrderedFloat64(a), OrderedFloat64(b)), javaCompare(a, b); got != want {
				t.Errorf("order(%v, %v) = %d, want %d", a, b, got, want)
			}
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		gen := rapid.OneOf(rapid.Float64(), rapid.SampledFrom(specialFloats),
			rapid.Map(rapid.Uint64(), math.Float64frombits))
		a, b := gen.Draw(t, "a"), gen.Draw(t, "b")
		if got, want := cmpU64(OrderedFloat64(a), OrderedFloat64(b)), javaCompare(a, b); got != want {
			t.Fatalf("order(%v [%#x], %v [%#x]) = %d, want %d", a, math.Float64bits(a), b, math.Float64bits(b), got, want)
		}
		fa, fb := float32(a), float32(b)
		got := cmpU64(uint64(OrderedFloat32(fa)), uint64(OrderedFloat32(fb)))
		if want := javaCompare(float64(fa), float64(fb)); got != want {
			t.Fatalf("order32(%v, %v) = %d, want %d", fa, fb, got, want)
		}
	})
	// Sorting by the encoding gives Iceberg's order.
	vals := slices.Clone(specialFloats)
	slices.SortFunc(vals, func(a, b float64) int { return cmpU64(OrderedFloat64(a), OrderedFloat64(b)) })
	if !slices.IsSortedFunc(vals, javaCompare) || !math.IsInf(vals[0], -1) || !math.IsNaN(vals[len(vals)-1]) {
		t.Errorf("sorted by the encoding: %v", vals)
	}
	if i := slices.Index(vals, 0); !math.Signbit(vals[i]) || math.Signbit(vals[i+1]) {
		t.Errorf("-0.0 does not precede +0.0: %v", vals)
	}
}

func TestOrderedInt64(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a, b := rapid.Int64().Draw(t, "a"), rapid.Int64().Draw(t, "b")
		want := 0
		if a < b {
			want = -1
		} else if a > b {
			want = 1
		}
		if got := cmpU64(OrderedInt64(a), OrderedInt64(b)); got != want {
			t.Fatalf("order(%d, %d) = %d, want %d", a, b, got, want)
		}
	})
}
