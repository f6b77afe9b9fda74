package cluster

import (
	"math"
	"slices"
)

// DefaultSTRFiles is the file count str sizes its slabs for when
// SortOptions.Files is 0: 8 slabs of 8 files.
const DefaultSTRFiles = 64

// STRSlabs is the number of vertical slabs str cuts the rows of files
// files into: the square root of files, rounded, so that each slab holds
// about as many files as there are slabs and files come out roughly square
// in row-count terms. It is at least 1.
func STRSlabs(files int) int {
	return max(1, int(math.Round(math.Sqrt(float64(files)))))
}

// sampled reports whether s's statistics keep a sample of the positions:
// quantile normalisation needs one, and str's slab boundaries are
// quantiles of x.
func (s *Sorter) sampled() bool {
	return s.opts.Normalize == NormalizeQuantile || s.order.Curve == CurveSTR || s.order.Curve == CurveKD
}

// slabCells returns the x cells where str's slabs 1 .. k-1 start, taken
// from sample, the x values sampled (sorted in place). Boundary i lies in
// the middle of file round(i*files/k) when the rows are cut into files
// equal runs, so that the file cut there holds the top (or bottom) half
// of two neighbouring slabs: a box no larger than an ordinary file's.
// Placed on a file boundary instead, the cut would fall a few rows to
// either side of it (the boundary comes from a sample and files are cut by
// bytes), and a file holding a few rows of the next slab spans both slabs'
// width over a whole file's height; measured, that cost 5-15% more files
// planned at a few dozen files. Boundaries that collapse onto the same
// cell (many equal x values) merge, leaving fewer slabs.
func slabCells(sample []float64, nm dimNorm, files int) []uint32 {
	k := STRSlabs(files)
	if len(sample) == 0 || k == 1 {
		return nil
	}
	slices.Sort(sample)
	var cells []uint32
	for i := 1; i < k; i++ {
		at := int((math.Round(float64(i)*float64(files)/float64(k)) - 0.5) * float64(len(sample)) / float64(files))
		c := nm.cellFloat(sample[min(at, len(sample)-1)])
		if c > 0 && (len(cells) == 0 || c > cells[len(cells)-1]) {
			cells = append(cells, c)
		}
	}
	return cells
}

// strKeys writes the str key of each row: its slab (the number of slab
// boundaries at or below its x cell) in the bits above its y cell, so rows
// sort by slab and then by y. Odd slabs run y downwards (a serpentine), so
// that a file straddling two slabs stays at one end of the map instead of
// spanning it.
func strKeys(dst []uint64, xs, ys []uint32, slabs []uint32, bits int) {
	last := uint32(math.Ldexp(1, bits) - 1)
	for i := range dst {
		slab := upper(slabs, xs[i])
		y := ys[i]
		if slab%2 == 1 {
			y = last - y
		}
		dst[i] = uint64(slab)<<uint(bits) | uint64(y)
	}
}

// upper returns the number of values of the ascending slice a that are
// at most v (sort.Search without the call per step).
func upper(a []uint32, v uint32) int {
	lo, hi := 0, len(a)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if a[mid] <= v {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}
