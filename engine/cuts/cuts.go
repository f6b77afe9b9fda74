// Package cuts chooses where a group's rows, in their written order, are
// cut into files: even counts, or window-aware cuts that minimise how many
// files an expected query window plans; and Sink cuts a stream of batches
// at those counts and writes the files, several at once, through a
// format's own file writer. It knows nothing of tables.
package cuts

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/geocompact/geocompact/engine/verify"
	"github.com/geocompact/geocompact/spatial"
)

// Window-aware cuts. A bbox query plans every file whose bbox meets its
// window, and a window of w × h meets a file box of W × H over an area of
// (W + w)(H + h): so, along a curve order, where the files are cut decides
// how many files an average query plans. Blocks.Window chooses the cuts that
// minimise the sum over files of (W + w)(H + h) for an expected window,
// keeping every file between cutMinShare and cutMaxShare of the even share
// of rows, and the number of files as planned.

const (
	cutMinShare = 0.75 // of the even share of rows, like min-file-size
	cutMaxShare = 1.8  // like max-file-size
	// BlocksPerCut is how many blocks (candidate cut points) to gather
	// per file.
	BlocksPerCut = 32
)

// Blocks is the bbox of each run of blockRows rows (the last run may
// be shorter), in row order.
type Blocks struct {
	blockRows int64
	rows      int64
	boxes     []spatial.Bound
}

// NewBlocks returns empty Blocks of blockRows rows each.
func NewBlocks(blockRows int64) *Blocks {
	return &Blocks{blockRows: max(1, blockRows)}
}

// Add folds the rows of rec, in order, into the block boxes; geom and
// bbox are the columns verify.Extent reads the boxes from.
func (bb *Blocks) Add(rec arrow.RecordBatch, geom int, bbox [4]int) {
	for off := int64(0); off < rec.NumRows(); {
		k := bb.rows % bb.blockRows
		take := min(bb.blockRows-k, rec.NumRows()-off)
		if k == 0 {
			bb.boxes = append(bb.boxes, spatial.EmptyBound())
		}
		last := &bb.boxes[len(bb.boxes)-1]
		*last = last.Extend(verify.Extent(rec.NewSlice(off, off+take), geom, bbox))
		off += take
		bb.rows += take
	}
}

// Window returns the row counts of n files over the blocks, cut to
// minimise Σ (W + w)(H + h) for a w × h window with each file between
// cutMinShare and cutMaxShare of rows/n rows. It falls back to even
// counts when the blocks cannot honour the bounds.
func (bb *Blocks) Window(n int, w, h float64) []int64 {
	even := func() []int64 {
		out := make([]int64, n)
		f := Even(bb.rows, n)
		for i := range out {
			out[i] = f(i)
		}
		return out
	}
	m := len(bb.boxes)
	if n <= 1 || m < n {
		return even()
	}
	share := float64(m) / float64(n)
	lo := max(1, int(math.Ceil(cutMinShare*share)))
	hi := max(lo, int(math.Floor(cutMaxShare*share)))
	inf := math.Inf(1)
	// cost[k][j]: least cost of cutting blocks [0, j) into k files.
	cost := make([][]float64, n+1)
	from := make([][]int32, n+1)
	for k := range cost {
		cost[k] = make([]float64, m+1)
		from[k] = make([]int32, m+1)
		for j := range cost[k] {
			cost[k][j] = inf
		}
	}
	cost[0][0] = 0
	for k := 1; k <= n; k++ {
		for j := k * lo; j <= min(m, k*hi); j++ {
			box := spatial.EmptyBound()
			for i := j - 1; i >= max(0, j-hi); i-- {
				box = box.Extend(bb.boxes[i])
				if j-i < lo || cost[k-1][i] == inf {
					continue
				}
				c := cost[k-1][i] + (box.Width()+w)*(box.Height()+h)
				if c < cost[k][j] {
					cost[k][j], from[k][j] = c, int32(i)
				}
			}
		}
	}
	if cost[n][m] == inf {
		return even()
	}
	out := make([]int64, n)
	for k, j := n, m; k > 0; k-- {
		i := int(from[k][j])
		rows := int64(j-i) * bb.blockRows
		if j == m { // the last block may be short
			rows -= int64(m)*bb.blockRows - bb.rows
		}
		out[k-1] = rows
		j = i
	}
	return out
}

// Even splits rows into n chunks whose sizes differ by at most one row;
// chunk(i) is the size of the i-th. Past the n-th chunk (when the
// estimate of rows was low) chunks keep the last size.
func Even(rows int64, n int) func(i int) int64 {
	rows, k := max(rows, 1), int64(max(n, 1))
	return func(i int) int64 {
		j := min(int64(i), k-1)
		return max(rows*(j+1)/k-rows*j/k, 1)
	}
}
