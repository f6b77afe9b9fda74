package cluster

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/geocompact/geocompact/spatial"
)

// The kd layout (--curve kd): a k-d tree over the rows' box centres whose
// leaves are the output files. Each split halves a node's files (and so
// its rows) along x or y, and the axis is chosen by cost: a window query
// plans every file whose box it meets, so the split taken is the one whose
// two halves, each split on down to its files (by the cheapest of a few
// fixed ways: see continuation), are met by fewer windows. The windows
// are SortOptions.Windows, else data-placed like bench's and auto's
// (KDAreas of the extent, one centred on every sampled row), counted on a
// summed-area grid (kdcost.go), so the tree cuts dense regions finely and
// in the direction windows cross least. A kd key is the row's leaf in its top
// KDLeafBits bits and its Hilbert index inside the leaf below them, and
// files must be cut where the leaf changes (Sorter.CutShift): cut anywhere
// else, a file holds rows of two leaves and spans both.

// KDLeafBits is how many top bits of a kd key number its leaf.
const KDLeafBits = 16

// kdMinLeafRows is the fewest sample rows a kd leaf is built from: with
// fewer files' worth of sample than that, several files share a leaf
// (they are cut from it at even counts, in Hilbert order).
const kdMinLeafRows = 64

// kdBuildPoints is the fewest sample points a kd tree is built from
// when the sample has more.
const kdBuildPoints = 1 << 14

// KDAreas are the window areas, fractions of the extent, that kd's splits
// are costed for: the areas auto chooses for by default.
var KDAreas = AutoAreas

// kdNode is one split of a kd tree. Rows whose cell on axis is below cell
// go to lo, the others to hi; a child below 0 is leaf ^child.
type kdNode struct {
	Axis uint8  `json:"a"`
	Cell uint32 `json:"c"`
	Lo   int32  `json:"l"`
	Hi   int32  `json:"h"`
}

// kdTree is a built tree: nodes[0] is the root (no nodes: one leaf).
type kdTree struct {
	nodes  []kdNode
	leaves int
}

// leaf returns the leaf the cells x, y fall in.
func (t *kdTree) leaf(x, y uint32) int {
	if len(t.nodes) == 0 {
		return 0
	}
	i := int32(0)
	for {
		n := &t.nodes[i]
		v := x
		if n.Axis == 1 {
			v = y
		}
		next := n.Hi
		if v < n.Cell {
			next = n.Lo
		}
		if next < 0 {
			return int(^next)
		}
		i = next
	}
}

// kdKeys writes the kd key of each row: its leaf above the Hilbert index
// of its cells (the top 24 bits of each) within the leaf.
func kdKeys(dst []uint64, xs, ys []uint32, t *kdTree, bits int) {
	const inLeaf = 64 - KDLeafBits
	sh := uint(32 - bits)
	for i := range dst {
		h := hilbert2(xs[i]<<sh, ys[i]<<sh) >> (64 - inLeaf)
		dst[i] = uint64(t.leaf(xs[i], ys[i]))<<inLeaf | h
	}
}

type kdPoint struct{ x, y float64 }

func (p kdPoint) on(axis int) float64 {
	if axis == 0 {
		return p.x
	}
	return p.y
}

// kdBuilder builds a tree from sample points.
type kdBuilder struct {
	sets    []kdWindowSet
	weights []float64
	cells   [2]func(float64) uint32
	nodes   []kdNode
	leaves  int
	// share is the sample points per leaf of the whole tree, and
	// leavesWanted its leaves.
	share        float64
	leavesWanted int
}

// buildKD builds the kd tree for files files from the sampled centres xs,
// ys (paired), keyed through the cell functions of the two axes. Splits
// are costed for sets, else for data-placed windows sized by extent.
// Leaves are numbered in tree order.
func buildKD(xs, ys []float64, cellX, cellY func(float64) uint32, extent spatial.Bound, files int, sets []WindowSet) *kdTree {
	// Building costs about n·log²(files) for n points: a few dozen
	// points per leaf are enough, so the sample is thinned to that.
	stride := max(1, len(xs)/max(kdBuildPoints, files*kdMinLeafRows*2))
	pts := make([]kdPoint, 0, len(xs)/stride+1)
	for i := 0; i < len(xs); i += stride {
		pts = append(pts, kdPoint{xs[i], ys[i]})
	}
	leaves := min(max(1, files), max(1, len(pts)/kdMinLeafRows), 1<<KDLeafBits-1)
	if leaves == 1 {
		return &kdTree{leaves: 1}
	}
	b := &kdBuilder{cells: [2]func(float64) uint32{cellX, cellY}}
	for _, set := range sets {
		if ws, ok := kdGivenSet(set.Windows); ok {
			b.sets = append(b.sets, ws)
		}
	}
	if len(b.sets) == 0 {
		b.sets = kdDataSets(xs, ys, extent)
	}
	// Each window set weighs the same relative to what it plans: its
	// weight is one over its cost for a plain median split.
	weights := make([]float64, len(b.sets))
	for s := range b.sets {
		weights[s] = 1 / max(1, b.approxSet(pts, leaves, s))
	}
	b.weights = weights
	b.share, b.leavesWanted = float64(len(pts))/float64(leaves), leaves
	b.build(pts, leaves)
	return &kdTree{nodes: b.nodes, leaves: b.leaves}
}

// approxSet is continuation with only window set s counted.
func (b *kdBuilder) approxSet(pts []kdPoint, files, s int) float64 {
	b.weights = make([]float64, len(b.sets))
	b.weights[s] = 1
	return b.continuation(pts, files)
}

// build splits pts (owned) into files leaves and returns the child
// reference of the subtree: a node index, or ^leaf.
func (b *kdBuilder) build(pts []kdPoint, files int) int32 {
	if files == 1 {
		b.leaves++
		return ^int32(b.leaves - 1)
	}
	axis, at := b.bestSplit(pts, files)
	f1 := files / 2
	selectNth(pts, at, axis)
	i := int32(len(b.nodes))
	b.nodes = append(b.nodes, kdNode{Axis: uint8(axis), Cell: b.cells[axis](pts[at].on(axis))})
	lo := b.build(pts[:at], f1)
	hi := b.build(pts[at:], files-f1)
	b.nodes[i].Lo, b.nodes[i].Hi = lo, hi
	return i
}

// Split positions: besides the even split, kdShiftSteps positions each
// side of it are tried, kdShiftStep of a file's share apart, in trees of
// at most kdShiftMaxFiles leaves. Trying them costs about five times the
// build; with more leaves that is seconds per group, and the gain there
// is small (each window already meets many files).
const (
	kdShiftSteps    = 2
	kdShiftStep     = 0.1
	kdShiftMaxFiles = 128
)

// bestSplit returns the axis and position whose split the windows meet
// least (each half costed by its cheapest continuation): the even split
// or, in small trees, one moved by whole steps of a file's share, as long
// as both halves keep between 0.85 and 1.2 shares per file. Ties go to x,
// then to the even split.
func (b *kdBuilder) bestSplit(pts []kdPoint, files int) (int, int) {
	f1 := files / 2
	even := len(pts) * f1 / files
	steps := 0
	if b.leavesWanted <= kdShiftMaxFiles {
		steps = kdShiftSteps
	}
	best, bestAt, bestCost := 0, even, math.Inf(1)
	tmp := make([]kdPoint, len(pts))
	for axis := range 2 {
		copy(tmp, pts)
		for _, k := range shiftOrder(steps) {
			at := even + int(math.Round(float64(k)*kdShiftStep*b.share))
			if k != 0 && (at <= 0 || at >= len(pts) || !b.inBand(at, f1) || !b.inBand(len(pts)-at, files-f1)) {
				continue
			}
			selectNth(tmp, at, axis)
			c := b.continuation(tmp[:at], f1) + b.continuation(tmp[at:], files-f1)
			if c < bestCost {
				best, bestAt, bestCost = axis, at, c
			}
		}
	}
	return best, bestAt
}

// shiftOrder lists the steps to try, the even split (0) first so that
// ties keep it: 0, -1, 1, -2, 2, ...
func shiftOrder(steps int) []int {
	out := []int{0}
	for k := 1; k <= steps; k++ {
		out = append(out, -k, k)
	}
	return out
}

// inBand reports whether n points for files files keep each file between
// 0.85 and 1.2 of the tree's share.
func (b *kdBuilder) inBand(n, files int) bool {
	per := float64(n) / float64(files)
	return per >= 0.85*b.share && per <= 1.2*b.share
}

// The ways continuation splits a node on down to its leaves: every split
// across the longer side of the node's box, or every split across x
// (slabs), or every split across y.
const (
	longerSide = iota
	acrossX
	acrossY
)

// continuation is the cost of the cheapest of the fixed ways to split pts
// (reordered in place) into files leaves: a lookahead that sees both
// square-ish tiles (the longer side) and slabs, which win where the data
// is thinner than a window.
func (b *kdBuilder) continuation(pts []kdPoint, files int) float64 {
	c := math.Inf(1)
	for _, how := range [...]int{longerSide, acrossX, acrossY} {
		c = min(c, b.approx(pts, files, how))
	}
	return c
}

// approx is the cost of splitting pts (reordered in place) into files
// leaves by halving each node the way how says.
func (b *kdBuilder) approx(pts []kdPoint, files, how int) float64 {
	box := spatial.EmptyBound()
	for _, p := range pts {
		box = box.ExtendPoint(p.x, p.y)
	}
	if files == 1 || len(pts) < 2 {
		return b.cost(box)
	}
	axis := 0
	if how == acrossY || (how == longerSide && box.Height() > box.Width()) {
		axis = 1
	}
	f1 := files / 2
	at := len(pts) * f1 / files
	selectNth(pts, at, axis)
	return b.approx(pts[:at], f1, how) + b.approx(pts[at:], files-f1, how)
}

// cost is the weighted count of windows box meets.
func (b *kdBuilder) cost(box spatial.Bound) float64 {
	if box.IsEmpty() {
		return 0
	}
	c := 0.0
	for s, ws := range b.sets {
		if b.weights[s] != 0 {
			c += b.weights[s] * ws.meets(box)
		}
	}
	return c
}

// selectNth reorders pts so that pts[k] is the point that would be at k
// if they were sorted on axis, with no greater one before it and no
// smaller one after it (quickselect, middle pivot).
func selectNth(pts []kdPoint, k, axis int) {
	lo, hi := 0, len(pts)-1
	for lo < hi {
		pivot := pts[lo+(hi-lo)/2].on(axis)
		i, j := lo, hi
		for i <= j {
			for pts[i].on(axis) < pivot {
				i++
			}
			for pts[j].on(axis) > pivot {
				j--
			}
			if i <= j {
				pts[i], pts[j] = pts[j], pts[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return
		}
	}
}

// oneLeaf is the tree of a kd scale that has none (too few rows to split).
var oneLeaf = &kdTree{leaves: 1}

func (nm *dimNorm) kdTree() *kdTree {
	if nm.kd == nil {
		return oneLeaf
	}
	return nm.kd
}

// CutShift reports whether s's layout decides where files are cut: when
// ok, each file must hold rows of one key>>shift cell only (kd's leaves),
// and RunFiles turns the row counts of the cells, in key order, into file
// row counts. Cut at even counts instead, files would straddle cells.
func (s *Sorter) CutShift() (shift uint, ok bool) {
	if s.order.Curve == CurveKD {
		return 64 - KDLeafBits, true
	}
	return 0, false
}

// RunFiles returns the row counts of the files that runs (the row counts
// of a layout's cells, in key order; see CutShift) are written to when
// the rows are meant for about files files: each run of at least half a
// file's even share of rows becomes round(run/share) files of even
// counts, and a smaller run joins the next (the last one, the previous).
// Runs of 0 rows are skipped.
func RunFiles(runs []int64, files int) []int64 {
	var total int64
	for _, r := range runs {
		total += r
	}
	if total == 0 {
		return nil
	}
	share := float64(total) / float64(max(1, files))
	var merged []int64
	var carry int64
	for _, r := range runs {
		carry += r
		if float64(carry) >= share/2 {
			merged = append(merged, carry)
			carry = 0
		}
	}
	if carry > 0 {
		if len(merged) == 0 {
			merged = append(merged, 0)
		}
		merged[len(merged)-1] += carry
	}
	var out []int64
	for _, r := range merged {
		k := max(1, int64(math.Round(float64(r)/share)))
		for i := range k {
			out = append(out, (i+1)*r/k-i*r/k)
		}
	}
	return out
}

// Cells counts rows by cell (key>>shift, see CutShift): the counts of a
// group's parts add up to the group's.
type Cells map[uint64]int64

// Add adds the counts of o to c.
func (c Cells) Add(o Cells) {
	for k, n := range o {
		c[k] += n
	}
}

// Runs returns the row count of every cell, in cell order: what RunFiles
// cuts.
func (c Cells) Runs() []int64 {
	cells := slices.Sorted(maps.Keys(c))
	out := make([]int64, len(cells))
	for i, k := range cells {
		out[i] = c[k]
	}
	return out
}

// CellRuns counts the rows of each key>>shift cell; Runs returns the
// counts in key order.
type CellRuns struct {
	shift uint
	n     Cells
}

// NewCellRuns returns empty counts for cells key>>shift.
func NewCellRuns(shift uint) *CellRuns {
	return &CellRuns{shift: shift, n: Cells{}}
}

// Add counts keys.
func (c *CellRuns) Add(keys []uint64) {
	for _, k := range keys {
		c.n[k>>c.shift]++
	}
}

// Runs returns the row count of every cell seen, in cell order.
func (c *CellRuns) Runs() []int64 { return c.n.Runs() }

// check reports a tree that routing could not walk: a child that is not a
// later node or a leaf below leaves.
func (t *kdTree) check() error {
	for i, n := range t.nodes {
		for _, c := range [2]int32{n.Lo, n.Hi} {
			if (c >= 0 && (int(c) <= i || int(c) >= len(t.nodes))) || (c < 0 && int(^c) >= t.leaves) || n.Axis > 1 {
				return fmt.Errorf("kd node %d: bad child %d or axis %d", i, c, n.Axis)
			}
		}
	}
	return nil
}
