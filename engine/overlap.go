package engine

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/geocompact/geocompact/engine/optval"
	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/table"
)

// Defaults of the overlap-aware selection (see Options.OverlapSelection).
const (
	defaultOverlapMaxDepth = 6
	defaultOverlapMaxBytes = 0.33
	// overlapCutWindow is the window area, as a fraction of the group's
	// extent, that a merged group is cut for (see Group.CutWindow).
	overlapCutWindow = 0.001
	// overlapAreaWeight is the power of a file's box area in its merge
	// priority (see overlapped).
	overlapAreaWeight = 0.25
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
//   - otherwise the candidates are merged with the size-healthy files
//     their boxes overlap, in the order of overlapped (files whose boxes
//     meet many others, weighted by their area, first), while the
//     candidates and the merged files stay within OverlapMaxBytes of the
//     partition's bytes. Sorted together, the new rows in sparse areas
//     join the wide files already covering them, and files that earlier
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
	if !o.OverlapSelection || !o.clustered || o.RewriteAll || len(cands) == 0 || len(healthy) == 0 || !allBounded(cands, healthy) {
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
	order := overlapped(cands, healthy)
	merged := map[int]bool{}
	for _, i := range order {
		if used+healthy[i].Size > budget {
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
	reason := fmt.Sprintf("%d new files overlap %d size-healthy files; merged with %d of them (%s of %s, %s=%g)",
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

// overlapped returns the indexes of the healthy files whose boxes some
// candidate's box intersects, highest priority first. A file's priority
// is the number of healthy files whose boxes meet its box (itself
// included) times its box's area, as a share of the partition's extent,
// to the power overlapAreaWeight; ties go to the sparsest (fewest records
// per unit of box area), then to position.
//
// The count finds the files laid over others: a file an earlier rewrite
// stretched over a dense area meets every file under it. The area
// favours the large boxes of sparse areas, where new rows left out make
// the widest files. Sparsest first alone keeps rewriting the same sparse
// files while wide files pile up over the dense areas, and files planned
// per window drift away from a full re-sort's round after round
// (docs/layouts.md).
func overlapped(cands []table.PlanFile, healthy []Skipped) []int {
	type hit struct {
		i                 int
		priority, density float64
	}
	extent := spatial.EmptyBound()
	for _, h := range healthy {
		extent = extent.Extend(h.Bound)
	}
	for _, c := range cands {
		extent = extent.Extend(c.Bound)
	}
	var hits []hit
	for i, h := range healthy {
		if !slices.ContainsFunc(cands, func(c table.PlanFile) bool { return c.Bound.Intersects(h.Bound) }) {
			continue
		}
		meets := 0
		for _, o := range healthy {
			if o.Bound.Intersects(h.Bound) {
				meets++
			}
		}
		area := math.Max(h.Bound.Area()/math.Max(extent.Area(), math.SmallestNonzeroFloat64), 1e-12)
		hits = append(hits, hit{i, float64(meets) * math.Pow(area, overlapAreaWeight), float64(h.Records) / math.Max(h.Bound.Area(), math.SmallestNonzeroFloat64)})
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
