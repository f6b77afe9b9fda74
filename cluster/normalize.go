package cluster

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sort"
	"strings"
)

// Normalization selects how curve coordinates become grid cells.
type Normalization int

const (
	// NormalizeExtent maps each axis linearly over an extent (the table's,
	// or the data's when none is given); values outside it clamp to its
	// edge. Numeric curve columns keep the top bits of their
	// order-preserving encoding relative to the data's minimum. Default.
	NormalizeExtent Normalization = iota
	// NormalizeQuantile maps each axis through the empirical distribution
	// of a sample of the data (as Delta's liquid clustering does): every
	// grid cell range holds about as many rows, so dense regions get fine
	// cells and empty ones coarse cells. It resists skewed data.
	NormalizeQuantile
)

// ParseNormalization parses "extent" or "quantile" (case-insensitive).
func ParseNormalization(s string) (Normalization, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "extent", "":
		return NormalizeExtent, nil
	case "quantile":
		return NormalizeQuantile, nil
	}
	return 0, fmt.Errorf("cluster: unknown normalization %q, want extent or quantile", s)
}

// String returns "extent" or "quantile".
func (n Normalization) String() string {
	switch n {
	case NormalizeExtent:
		return "extent"
	case NormalizeQuantile:
		return "quantile"
	}
	return fmt.Sprintf("Normalization(%d)", int(n))
}

// sampleSize bounds the sample quantile normalisation draws, and
// quantileCount the boundaries kept from it.
const (
	sampleSize    = 1 << 16
	quantileCount = 1024
)

// quantiles maps values through a piecewise-linear empirical distribution
// function onto 2^bits cells: monotone, and linear between boundaries so
// that the cells keep their full resolution.
type quantiles struct {
	q     []float64
	cells float64
	last  uint32
}

// newQuantiles builds the mapping from a sample; it returns false when the
// sample has fewer than two distinct values.
func newQuantiles(sample []float64, nbits int) (quantiles, bool) {
	slices.Sort(sample)
	if len(sample) < 2 || sample[0] == sample[len(sample)-1] {
		return quantiles{}, false
	}
	k := min(quantileCount, len(sample)-1)
	q := make([]float64, 0, k+1)
	for j := 0; j <= k; j++ {
		v := sample[j*(len(sample)-1)/k]
		if len(q) == 0 || v > q[len(q)-1] {
			q = append(q, v)
		}
	}
	cells := math.Ldexp(1, nbits)
	return quantiles{q: q, cells: cells, last: uint32(cells - 1)}, true
}

func (qs quantiles) cell(v float64) uint32 {
	q := qs.q
	if !(v > q[0]) {
		return 0
	}
	if v >= q[len(q)-1] {
		return qs.last
	}
	i := sort.SearchFloat64s(q, v) // q[i-1] < v <= q[i]
	lo, hi := q[i-1], q[i]
	f := (float64(i-1) + (v-lo)/(hi-lo)) / float64(len(q)-1) * qs.cells
	if f >= qs.cells {
		return qs.last
	}
	return uint32(f)
}

// rangeBits normalises order-preserving encodings relative to the data's
// minimum, keeping the top nbits bits of the range: exact when the range
// fits, monotone always.
type rangeBits struct {
	min   uint64
	shift uint
}

func newRangeBits(lo, hi uint64, nbits int) rangeBits {
	if hi < lo {
		return rangeBits{}
	}
	w := bits.Len64(hi - lo)
	return rangeBits{min: lo, shift: uint(max(0, w-nbits))}
}

func (r rangeBits) cell(enc uint64) uint32 {
	if enc < r.min {
		return 0
	}
	return uint32((enc - r.min) >> r.shift)
}
