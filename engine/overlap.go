package engine

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/geocompact/geocompact/cluster"
	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/optval"
)

// Defaults of the overlap-aware selection (see Options.OverlapSelection).
const (
	defaultOverlapMaxDepth = 6
	defaultOverlapMaxBytes = 0.33
	// overlapCutWindow is the window area, as a fraction of the group's
	// extent, that a merged group is cut for (see Group.CutWindow). Cut
	// for windows of 0.05% rather than 0.1%, with overlapRegionShare at
	// 0.8 rather than 0.75, files planned per 1% window stay within 1.15×
	// a full re-sort's over ten rounds on the places data as well as on
	// clustered points (docs/layouts.md).
	overlapCutWindow = 0.0005
	// overlapAreaWeight is the power of a file's box area in its merge
	// priority (see overlapPriorities).
	overlapAreaWeight = 0.25
	// overlapRegionShare is the share of the byte budget left after the
	// candidates that goes to one region of the partition re-sorted whole
	// (see overlapRegion); the rest goes to files in priority order.
	overlapRegionShare = 0.8
	// overlapRegionOrder is the order of the Hilbert grid that lays the
	// files along the curve for overlapRegion.
	overlapRegionOrder = 16
)

// overlapSelect is the overlap-aware part of a partition's selection. It
// applies to a rewrite that sorts by position (o.clustered) without
// rewrite-all, when every file of the partition has a box in its
// statistics; otherwise it returns its input unchanged.
//
// New arrivals land as small files whose boxes span much of the map, so
// sorting only them (size-based selection) adds files that every window
// there plans, run after run. Instead:
//   - when the size-healthy files already overlap more than
//     OverlapMaxDepth (spatial.MeanDepth of their boxes), the overlap has
//     built up: every file of the partition becomes a candidate and the
//     partition is re-sorted whole. Only a partition with candidates is:
//     re-sorting unchanged files would give the same files again;
//   - otherwise the candidates are merged with size-healthy files while
//     the candidates and the merged files stay within OverlapMaxBytes of
//     the partition's bytes: first one region, the run of files along the
//     curve whose boxes meet the most others (overlapRegion), with
//     overlapRegionShare of the budget left; then, with the rest, the files
//     the candidates' boxes overlap, in the order of overlapped (files
//     whose boxes meet many others, weighted by their area, first). The
//     region moves round after round to where files overlap most and is
//     re-sorted as a whole there. Sorted together, the new rows in sparse
//     areas join the wide files already covering them, and files that earlier
//     rewrites laid over dense areas are folded back into the files under
//     them, instead of a new layer of wide files piling up there round
//     after round. When the candidates overlap only a few files (arrivals
//     in one region), all of those are merged and the region is as if
//     re-sorted. The merged group is cut for small windows (Group.CutWindow),
//     so that the new rows left between merged files do not join a file
//     of a distant area along the curve.
//
// It returns the candidates, the files left alone, the reason every
// group of the partition is kept ("" when it changed nothing) and the
// window fraction its groups are cut for (Group.CutWindow; 0 for even
// cuts).
func (o Options) overlapSelect(cands []table.PlanFile, healthy []Skipped) ([]table.PlanFile, []Skipped, string, float64) {
	if !o.OverlapSelection || !o.clustered || o.RewriteAll || o.PurgeDeletes || len(cands) == 0 || len(healthy) == 0 || !allBounded(cands, healthy) {
		return cands, healthy, "", 0
	}
	boxes := make([]spatial.Bound, len(healthy))
	for i, f := range healthy {
		boxes[i] = f.Bound
	}
	if d := spatial.MeanDepth(boxes); d > o.OverlapMaxDepth {
		for _, f := range healthy {
			cands = append(cands, f.PlanFile)
		}
		return cands, nil, fmt.Sprintf("size-healthy files overlap %.2f deep on average, above %s=%g: re-sorting the partition", d, OptOverlapMaxDepth, o.OverlapMaxDepth), 0
	}
	var total, used int64
	for _, f := range cands {
		total += f.Size
		used += f.Size
	}
	for _, f := range healthy {
		total += f.Size
	}
	budget := int64(o.OverlapMaxBytes * float64(total))
	prio, extent := overlapPriorities(cands, healthy)
	order := overlapped(cands, healthy, prio)
	merged := map[int]bool{}
	for _, i := range overlapRegion(healthy, prio, extent, int64(overlapRegionShare*float64(budget-used))) {
		used += healthy[i].Size
		merged[i] = true
	}
	for _, i := range order {
		if merged[i] || used+healthy[i].Size > budget {
			continue
		}
		used += healthy[i].Size
		merged[i] = true
	}
	if len(merged) == 0 {
		return cands, healthy, "", 0
	}
	var rest []Skipped
	for i, f := range healthy {
		if merged[i] {
			cands = append(cands, f.PlanFile)
			continue
		}
		rest = append(rest, f)
	}
	reason := fmt.Sprintf("%d new files overlap %d size-healthy files; merged with %d size-healthy files, a region along the curve first (%s of %s, %s=%g)",
		len(cands)-len(merged), len(order), len(merged), optval.FormatBytes(used), optval.FormatBytes(total), OptOverlapMaxBytes, o.OverlapMaxBytes)
	return cands, rest, reason, overlapCutWindow
}

// allBounded reports whether every file has a box from its statistics.
func allBounded(cands []table.PlanFile, healthy []Skipped) bool {
	for _, f := range cands {
		if !f.HasBound {
			return false
		}
	}
	for _, f := range healthy {
		if !f.HasBound {
			return false
		}
	}
	return true
}

// overlapPriorities returns the merge priority of every healthy file,
// and the partition's extent: the number of healthy files whose boxes
// meet the file's box (itself included) times its box's area, as a share
// of the extent, to the power overlapAreaWeight.
//
// The count finds the files laid over others: a file an earlier rewrite
// stretched over a dense area meets every file under it. The area
// favours the large boxes of sparse areas, where new rows left out make
// the widest files.
func overlapPriorities(cands []table.PlanFile, healthy []Skipped) ([]float64, spatial.Bound) {
	extent := spatial.EmptyBound()
	for _, h := range healthy {
		extent = extent.Extend(h.Bound)
	}
	for _, c := range cands {
		extent = extent.Extend(c.Bound)
	}
	prio := make([]float64, len(healthy))
	for i, h := range healthy {
		meets := 0
		for _, o := range healthy {
			if o.Bound.Intersects(h.Bound) {
				meets++
			}
		}
		area := math.Max(h.Bound.Area()/math.Max(extent.Area(), math.SmallestNonzeroFloat64), 1e-12)
		prio[i] = float64(meets) * math.Pow(area, overlapAreaWeight)
	}
	return prio, extent
}

// overlapped returns the indexes of the healthy files whose boxes some
// candidate's box intersects, highest priority (prio) first; ties go to
// the sparsest (fewest records per unit of box area), then to position.
// Sparsest first alone keeps rewriting the same sparse files while wide
// files pile up over the dense areas, and files planned per window drift
// away from a full re-sort's round after round (docs/layouts-history.md).
func overlapped(cands []table.PlanFile, healthy []Skipped, prio []float64) []int {
	type hit struct {
		i                 int
		priority, density float64
	}
	var hits []hit
	for i, h := range healthy {
		if !slices.ContainsFunc(cands, func(c table.PlanFile) bool { return c.Bound.Intersects(h.Bound) }) {
			continue
		}
		hits = append(hits, hit{i, prio[i], float64(h.Records) / math.Max(h.Bound.Area(), math.SmallestNonzeroFloat64)})
	}
	slices.SortStableFunc(hits, func(a, b hit) int {
		return cmp.Or(cmp.Compare(b.priority, a.priority), cmp.Compare(a.density, b.density))
	})
	out := make([]int, len(hits))
	for k, h := range hits {
		out[k] = h.i
	}
	return out
}

// overlapRegion returns the indexes of a run of healthy files that are
// consecutive along the Hilbert curve over extent (by the centres of
// their boxes), of at most room bytes in all, whose priorities (prio) sum
// highest: a compact region where files overlap most, re-sorted whole.
// Merging the top files one by one instead scatters the rewrite over the
// map, and the new rows between them form wide files over the files left
// alone; on the places data that let files planned per window creep up
// round after round (docs/layouts-history.md).
func overlapRegion(healthy []Skipped, prio []float64, extent spatial.Bound, room int64) []int {
	h, err := cluster.NewHilbert(extent, overlapRegionOrder)
	if err != nil || room <= 0 {
		return nil
	}
	idx := make([]int, len(healthy))
	keys := make([]uint64, len(healthy))
	for i, f := range healthy {
		idx[i], keys[i] = i, h.Key(f.Bound)
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(keys[a], keys[b]) })
	best, from, to := -1.0, 0, 0
	var size int64
	var sum float64
	a := 0
	for b, i := range idx {
		size += healthy[i].Size
		sum += prio[i]
		for size > room && a <= b {
			size -= healthy[idx[a]].Size
			sum -= prio[idx[a]]
			a++
		}
		// Ties (within rounding) go to the earlier run.
		if a <= b && sum > best*(1+1e-9) {
			best, from, to = sum, a, b+1
		}
	}
	return idx[from:to]
}
