package engine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/cluster"
	"github.com/geocompact/geocompact/internal/testing/testpoints"
	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/optval"
)

// appendScenario is a Hilbert-clustered partition of 64 files after 20
// arrival files bring 7% new rows: what the scheduled rewrite faces.
type appendScenario struct {
	files   []simFile
	target  int64
	windows map[string][]spatial.Bound
}

func newAppendScenario(t testing.TB, rows int) appendScenario {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	base := testpoints.Clustered(rng, rows)
	files := sortedFiles(t, "old", base, 64)
	fresh := testpoints.Clustered(rng, rows*7/100)
	for i := range 20 {
		files = append(files, newSimFile("new-"+strconv.Itoa(i), fresh[i*len(fresh)/20:(i+1)*len(fresh)/20]))
	}
	all := append(append([]spatial.Bound(nil), base...), fresh...)
	extent := spatial.EmptyBound()
	for _, r := range all {
		extent = extent.Extend(r)
	}
	ws := map[string][]spatial.Bound{}
	for _, area := range []float64{0.01, 0.001} {
		w, err := cluster.DataWindows(all, extent, area, 400, 7)
		require.NoError(t, err)
		ws[cluster.AreaName(area)] = w
	}
	return appendScenario{files: files, target: int64(rows/64) * simRowBytes, windows: ws}
}

func (s appendScenario) plan(t testing.TB, kv map[string]string) (*Plan, []simFile) {
	t.Helper()
	kv[OptTargetFileSize] = strconv.FormatInt(s.target, 10)
	o, err := optionsOf(kv, nil)
	require.NoError(t, err)
	o.clustered = true
	p := o.Plan(planFilesOf(s.files))
	return p, simRewrite(t, s.files, p, 0)
}

func TestOverlapSelectionOnAppendedClusteredTable(t *testing.T) {
	t.Parallel()
	s := newAppendScenario(t, 200_000)
	sizeOnly, afterSize := s.plan(t, map[string]string{OptOverlapSelection: "false"})
	overlap, afterOverlap := s.plan(t, map[string]string{})
	full, afterFull := s.plan(t, map[string]string{OptRewriteAll: "true"})
	for name, ws := range s.windows {
		t.Logf("%s windows: size-only %.2f (%d bytes), overlap-aware %.2f (%d bytes), full %.2f (%d bytes)", name,
			meanPlanned(afterSize, ws), sizeOnly.Bytes(), meanPlanned(afterOverlap, ws), overlap.Bytes(), meanPlanned(afterFull, ws), full.Bytes())
		assert.Less(t, meanPlanned(afterOverlap, ws), meanPlanned(afterSize, ws), "%s windows", name)
		assert.Less(t, meanPlanned(afterOverlap, ws), 1.1*meanPlanned(afterFull, ws), "%s windows", name)
	}
	assert.Equal(t, 20, sizeOnly.Files(), "size-based selection takes the 20 arrival files only")
	assert.Greater(t, overlap.Files(), 20)
	assert.LessOrEqual(t, float64(overlap.Bytes()), 0.34*float64(full.Bytes()))
}

// gridPartition is 16 size-healthy files tiling a 4×4 grid of unit cells
// (tile-r-c covers [c, c+1] × [r, r+1], shrunk so neighbours do not touch),
// plus small new files covering box each.
func gridPartition(target int64, news ...spatial.Bound) []table.PlanFile {
	var files []table.PlanFile
	for r := range 4 {
		for c := range 4 {
			b := spatial.Bound{MinX: float64(c) + 0.01, MinY: float64(r) + 0.01, MaxX: float64(c) + 0.99, MaxY: float64(r) + 0.99}
			files = append(files, table.PlanFile{Path: "tile-" + strconv.Itoa(r) + "-" + strconv.Itoa(c), Size: target, Records: 1000, Bound: b, HasBound: true})
		}
	}
	for i, b := range news {
		files = append(files, table.PlanFile{Path: "new-" + strconv.Itoa(i), Size: target / 20, Records: 50, Bound: b, HasBound: true})
	}
	return files
}

func selectedPaths(p *Plan) []string {
	var out []string
	for _, g := range p.Groups {
		for _, f := range g.Files {
			out = append(out, f.Path)
		}
	}
	return out
}

func TestOverlapSelect(t *testing.T) {
	t.Parallel()
	const target = 1 << 20
	// Five arrivals in the lower-left corner overlap tiles (0,0), (0,1),
	// (1,0) and (1,1) only.
	corner := spatial.Bound{MinX: 0.2, MinY: 0.2, MaxX: 1.5, MaxY: 1.5}
	news := []spatial.Bound{corner, corner, corner, corner, corner}
	wantCorner := []string{"new-0", "new-1", "new-2", "new-3", "new-4", "tile-0-0", "tile-0-1", "tile-1-0", "tile-1-1"}
	deep := gridPartition(target, news...)
	for i := range 16 { // every tile spans the whole grid: depth 16
		deep[i].Bound = spatial.Bound{MaxX: 4, MaxY: 4}
	}
	unbounded := gridPartition(target, news...)
	unbounded[3].HasBound = false
	tests := []struct {
		name      string
		kv        map[string]string
		clustered bool
		files     []table.PlanFile
		want      []string
	}{
		{"arrivals merge with the files they overlap", nil, true, gridPartition(target, news...), wantCorner},
		{"disabled", map[string]string{OptOverlapSelection: "false"}, true, gridPartition(target, news...), wantCorner[:5]},
		{"layout not spatial", nil, false, gridPartition(target, news...), wantCorner[:5]},
		{"a file without statistics", nil, true, unbounded, wantCorner[:5]},
		// 0.08 of 16.25 tiles: the region's share of the budget left
		// (0.79 of a tile) holds no tile, and the rest goes by priority.
		{"budget keeps the sparsest overlapped files", map[string]string{OptOverlapMaxBytes: "0.08"}, true,
			func() []table.PlanFile {
				f := gridPartition(target, news...)
				f[1].Records = 10 // tile-0-1 is the sparsest
				return f
			}(), []string{"new-0", "new-1", "new-2", "new-3", "new-4", "tile-0-1"}},
		{"a file laid over others goes before a sparser one", map[string]string{OptOverlapMaxBytes: "0.08"}, true,
			func() []table.PlanFile {
				// A file an earlier rewrite stretched over tiles (0,0)-(1,1),
				// and tile-3-3 the sparsest; one arrival spans the grid.
				f := gridPartition(target, spatial.Bound{MaxX: 4, MaxY: 4})
				f[15].Records = 10
				return append(f, table.PlanFile{Path: "wide", Size: target, Records: 1000, Bound: spatial.Bound{MinX: 0.5, MinY: 0.5, MaxX: 1.5, MaxY: 1.5}, HasBound: true})
			}(), []string{"new-0", "wide"}},
		{"a region along the curve goes before scattered sparse files", map[string]string{OptOverlapMaxBytes: "0.17"}, true,
			func() []table.PlanFile {
				// Every tile meets only itself; the sparsest two lie in
				// opposite corners. The region's share of the budget holds
				// two tiles, the first two along the curve.
				f := gridPartition(target, spatial.Bound{MaxX: 4, MaxY: 4})
				f[3].Records, f[15].Records = 10, 10
				return f
			}(), []string{"new-0", "tile-0-0", "tile-0-1"}},
		{"deep overlap re-sorts the partition", nil, true, deep, nil},
		{"no arrivals, no rewrite", nil, true, gridPartition(target), []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kv := map[string]string{OptTargetFileSize: strconv.Itoa(target)}
			for k, v := range tc.kv {
				kv[k] = v
			}
			o, err := optionsOf(kv, nil)
			require.NoError(t, err)
			o.clustered = tc.clustered
			p := o.Plan(tc.files)
			got := selectedPaths(p)
			assert.Len(t, p.Skipped, len(tc.files)-len(got), "every file is selected or skipped")
			if tc.want == nil { // the whole partition, cut evenly
				assert.Len(t, got, len(tc.files))
				assert.Contains(t, p.Groups[0].Reason, OptOverlapMaxDepth)
				assert.Zero(t, p.Groups[0].CutWindow)
				return
			}
			assert.ElementsMatch(t, tc.want, got)
			for _, g := range p.Groups { // a group with merged files is cut for small windows
				merged := slices.ContainsFunc(g.Files, func(f table.PlanFile) bool { return !strings.HasPrefix(f.Path, "new-") })
				assert.Equal(t, merged, g.CutWindow > 0, g.Reason)
			}
		})
	}
}

// TestOverlapRegion checks that the region is the run of files along the
// curve whose priorities sum highest within the room, not the files of
// the highest priorities one by one.
func TestOverlapRegion(t *testing.T) {
	t.Parallel()
	// Eight files in a row along the bottom of an 8×8 extent, where the
	// Hilbert curve runs from left to right, listed out of order.
	extent := spatial.Bound{MaxX: 8, MaxY: 8}
	at := []int{5, 0, 7, 3, 1, 6, 4, 2}
	prio := []float64{1, 2.5, 0, 1, 0, 0, 1, 0} // of x = 5, 0, 7, 3, 1, 6, 4, 2
	healthy := make([]Skipped, len(at))
	for i, x := range at {
		b := spatial.Bound{MinX: float64(x) + 0.1, MinY: 0.1, MaxX: float64(x) + 0.9, MaxY: 0.9}
		healthy[i] = Skipped{PlanFile: table.PlanFile{Path: "x" + strconv.Itoa(x), Size: 100, Records: 100, Bound: b, HasBound: true}}
	}
	paths := func(idx []int) []string {
		var out []string
		for _, i := range idx {
			out = append(out, healthy[i].Path)
		}
		return out
	}
	// x3-x5 (1+1+1) outweigh x0-x2 (2.5), though x0 has the top priority.
	assert.Equal(t, []string{"x3", "x4", "x5"}, paths(overlapRegion(healthy, prio, extent, 399)))
	assert.Equal(t, []string{"x0"}, paths(overlapRegion(healthy, prio, extent, 100)))
	assert.Empty(t, overlapRegion(healthy, prio, extent, 99), "no file fits")
	assert.Equal(t, []string{"x0", "x1", "x2", "x3", "x4", "x5"}, paths(overlapRegion(healthy, prio, extent, 800)), "the run ends at its last file of some priority")
}

func TestOverlapOptionsRefuseBadValues(t *testing.T) {
	t.Parallel()
	for k, v := range map[string]string{OptOverlapMaxBytes: "1.5", OptOverlapMaxDepth: "0.5", OptOverlapSelection: "maybe"} {
		_, err := optionsOf(map[string]string{k: v}, nil)
		require.ErrorIs(t, err, optval.ErrBad, k)
		assert.Contains(t, err.Error(), k)
	}
}

// TestOverlapSelectionOverRounds runs the scheduled rewrite after each of
// eight rounds of arrivals (in memory): size-based selection lets files
// planned grow round after round, while the overlap-aware selection stays
// within the goals of a full re-sort of every round (1.15× its files
// planned per 1% window, 1.30× per 0.1% window), rewriting at most a
// third of its bytes. (On these generated points sparsest-first merging
// with even cuts held the goals too; the drift it showed over ten rounds
// of the engine's harness is measured in docs/layouts-history.md.)
func TestOverlapSelectionOverRounds(t *testing.T) {
	t.Parallel()
	s := newAppendScenario(t, 100_000)
	ws := [2][]spatial.Bound{s.windows["1%"], s.windows["0.1%"]}
	modes := []map[string]string{{OptOverlapSelection: "false"}, {}, {OptRewriteAll: "true"}}
	files := [][]simFile{s.files, s.files, s.files}
	var bytes [3]int64
	var planned [3][2]float64
	rng := rand.New(rand.NewPCG(9, 9))
	for round := range 8 {
		for m, kv := range modes {
			opts := map[string]string{OptTargetFileSize: strconv.FormatInt(s.target, 10)}
			for k, v := range kv {
				opts[k] = v
			}
			o, err := optionsOf(opts, nil)
			require.NoError(t, err)
			o.clustered = true
			p := o.Plan(planFilesOf(files[m]))
			bytes[m] += p.Bytes()
			files[m] = simRewrite(t, files[m], p, round)
			for i := range ws {
				planned[m][i] = meanPlanned(files[m], ws[i])
			}
		}
		t.Logf("round %d: files planned (1%%, 0.1%% windows) size-based %.2f, %.2f; overlap-aware %.2f, %.2f; full %.2f, %.2f; bytes so far %d, %d, %d",
			round, planned[0][0], planned[0][1], planned[1][0], planned[1][1], planned[2][0], planned[2][1], bytes[0], bytes[1], bytes[2])
		assert.LessOrEqual(t, planned[1][0], 1.15*planned[2][0], "round %d, 1%% windows", round)
		assert.LessOrEqual(t, planned[1][1], 1.30*planned[2][1], "round %d, 0.1%% windows", round)
		fresh := testpoints.Clustered(rng, 7000)
		for m := range files {
			for i := range 20 {
				files[m] = append(files[m], newSimFile(fmt.Sprintf("r%d-new-%d", round, i), fresh[i*350:(i+1)*350]))
			}
		}
	}
	assert.Greater(t, planned[0][0], 1.3*planned[2][0], "size-based selection lets overlap build up")
	assert.LessOrEqual(t, float64(bytes[1]), float64(bytes[2])/3)
}
