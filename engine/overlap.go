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
	defaultOverlapMaxBytes = 0.3
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
//     their boxes overlap, sparsest first (fewest records per unit of box
//     area), while the candidates and the merged files stay within
//     OverlapMaxBytes of the partition's bytes. Sorted together, the new
//     rows in sparse areas join the wide files already covering them,
//     instead of stretching a new file's box across the map; the new rows
//     left, in dense areas, sort into compact files there. When the
//     candidates overlap only a few files (arrivals in one region), all
//     of those are merged and the region is as if re-sorted.
//
// It returns the candidates, the files left alone, and the reason every
// group of the partition is kept ("" when it changed nothing).
func (o Options) overlapSelect(cands []table.PlanFile, healthy []Skipped) ([]table.PlanFile, []Skipped, string) {
	if !o.OverlapSelection || !o.clustered || o.RewriteAll || len(cands) == 0 || len(healthy) == 0 || !allBounded(cands, healthy) {
		return cands, healthy, ""
	}
	boxes := make([]spatial.Bound, len(healthy))
	for i, f := range healthy {
		boxes[i] = f.Bound
	}
	if d := spatial.MeanDepth(boxes); d > o.OverlapMaxDepth {
		for _, f := range healthy {
			cands = append(cands, f.PlanFile)
		}
		return cands, nil, fmt.Sprintf("size-healthy files overlap %.2f deep on average, above %s=%g: re-sorting the partition", d, OptOverlapMaxDepth, o.OverlapMaxDepth)
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
		return cands, healthy, ""
	}
	var rest []Skipped
	for i, f := range healthy {
		if merged[i] {
			cands = append(cands, f.PlanFile)
			continue
		}
		rest = append(rest, f)
	}
	reason := fmt.Sprintf("%d new files overlap %d size-healthy files; merged with the %d sparsest of them (%s of %s, %s=%g)",
		len(cands)-len(merged), len(order), len(merged), optval.FormatBytes(used), optval.FormatBytes(total), OptOverlapMaxBytes, o.OverlapMaxBytes)
	return cands, rest, reason
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
// candidate's box intersects, sparsest first: by records per unit of box
// area, then by how many candidates overlap them (most first), then by
// position.
func overlapped(cands []table.PlanFile, healthy []Skipped) []int {
	type hit struct {
		i       int
		density float64
		n       int
	}
	var hits []hit
	for i, h := range healthy {
		n := 0
		for _, c := range cands {
			if c.Bound.Intersects(h.Bound) {
				n++
			}
		}
		if n > 0 {
			hits = append(hits, hit{i, float64(h.Records) / math.Max(h.Bound.Area(), math.SmallestNonzeroFloat64), n})
		}
	}
	slices.SortStableFunc(hits, func(a, b hit) int {
		return cmp.Or(cmp.Compare(a.density, b.density), cmp.Compare(b.n, a.n))
	})
	out := make([]int, len(hits))
	for k, h := range hits {
		out[k] = h.i
	}
	return out
}
