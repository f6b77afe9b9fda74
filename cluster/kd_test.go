package cluster

import (
	"cmp"
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/internal/testing/testpoints"
	"github.com/geocompact/geocompact/spatial"
)

// hotspots returns n clustered points drawn from seed.
func hotspots(n int, seed uint64) []spatial.Bound {
	return testpoints.Clustered(rand.New(rand.NewPCG(seed, 1)), n)
}

// frozenSorter returns a Sorter for o over rec, its scale learned from rec.
func frozenSorter(t *testing.T, o Order, rec arrow.RecordBatch, files int) *Sorter {
	t.Helper()
	s, err := NewSorter(o, rec.Schema(), SortOptions{Files: files})
	require.NoError(t, err)
	st := s.NewStats(int(rec.NumRows()))
	require.NoError(t, st.Add(rec))
	s, err = s.WithScale(st.Scale(spatial.EmptyBound()))
	require.NoError(t, err)
	return s
}

func TestRunFiles(t *testing.T) {
	cases := []struct {
		name  string
		runs  []int64
		files int
		want  []int64
	}{
		{"one file per run", []int64{100, 90, 110}, 3, []int64{100, 90, 110}},
		{"a small run joins the next", []int64{100, 20, 80, 100}, 3, []int64{100, 100, 100}},
		{"a small last run joins the previous", []int64{100, 100, 10}, 2, []int64{100, 110}},
		{"a long run is cut evenly", []int64{100, 300}, 4, []int64{100, 100, 100, 100}},
		{"empty runs are skipped", []int64{0, 100, 0, 100}, 2, []int64{100, 100}},
		{"all small", []int64{3, 3, 3}, 1, []int64{9}},
		{"nothing", []int64{0}, 3, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := RunFiles(tc.runs, tc.files)
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestCellsAddUp checks that the cell counts of a group's parts, added
// up, give the runs of the group's keys counted whole, in cell order.
func TestCellsAddUp(t *testing.T) {
	const shift = 64 - KDLeafBits
	keys := []uint64{5 << shift, 1<<shift | 7, 5<<shift | 1, 0, 1 << shift, 5 << shift}
	whole := NewCellRuns(shift)
	whole.Add(keys)
	sum := Cells{}
	for _, part := range [][]uint64{keys[:2], keys[2:]} {
		c := NewCellRuns(shift)
		c.Add(part)
		sum.Add(c.n)
	}
	assert.Equal(t, []int64{1, 2, 3}, whole.Runs())
	assert.Equal(t, whole.Runs(), sum.Runs())
}

func TestSelectNth(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		n := 1 + rng.IntN(300)
		pts := make([]kdPoint, n)
		for i := range pts {
			pts[i] = kdPoint{float64(rng.IntN(20)), rng.Float64()} // many ties on x
		}
		axis, k := rng.IntN(2), rng.IntN(n)
		sorted := slices.Clone(pts)
		slices.SortFunc(sorted, func(a, b kdPoint) int { return cmp.Compare(a.on(axis), b.on(axis)) })
		selectNth(pts, k, axis)
		require.Equal(t, sorted[k].on(axis), pts[k].on(axis))
		for i := range pts {
			if i < k {
				require.LessOrEqual(t, pts[i].on(axis), pts[k].on(axis))
			} else {
				require.GreaterOrEqual(t, pts[i].on(axis), pts[k].on(axis))
			}
		}
	}
}

// TestKDFilesAreLeaves checks that cutting a kd order with RunFiles puts
// each file's rows in one leaf, gives about the files asked for, and
// that the leaves of points do not overlap.
func TestKDFilesAreLeaves(t *testing.T) {
	rows := hotspots(40000, 1)
	rec := BoundsBatch(rows)
	defer rec.Release()
	for _, files := range []int{1, 7, 40} {
		s := frozenSorter(t, Order{Curve: CurveKD}, rec, files)
		shift, ok := s.CutShift()
		require.True(t, ok)
		keys, err := s.Keys(rec)
		require.NoError(t, err)
		perm, err := s.Permutation([]arrow.RecordBatch{rec})
		require.NoError(t, err)
		runs := NewCellRuns(shift)
		runs.Add(keys)
		counts := RunFiles(runs.Runs(), files)
		assert.Len(t, counts, files, "one file per leaf")
		at := int64(0)
		var boxes []spatial.Bound
		for _, c := range counts {
			assert.InEpsilon(t, float64(len(rows))/float64(files), float64(c), 0.25, "leaf sizes follow the sample")
			box := spatial.EmptyBound()
			for _, r := range perm[at : at+c] {
				require.Equal(t, keys[perm[at]]>>shift, keys[r]>>shift, "a file holds one leaf")
				box = box.Extend(rows[r])
			}
			boxes = append(boxes, box)
			at += c
		}
		require.EqualValues(t, len(rows), at)
		for i := range boxes {
			for j := range i {
				inter := spatial.Bound{MinX: max(boxes[i].MinX, boxes[j].MinX), MinY: max(boxes[i].MinY, boxes[j].MinY),
					MaxX: min(boxes[i].MaxX, boxes[j].MaxX), MaxY: min(boxes[i].MaxY, boxes[j].MaxY)}
				assert.False(t, inter.MinX < inter.MaxX && inter.MinY < inter.MaxY, "files %d and %d overlap", i, j)
			}
		}
	}
}

// TestKDPlansFewerFilesThanCurves checks the point of kd on hotspot data:
// at a few dozen files it plans fewer files for data-placed windows than
// every curve.
func TestKDPlansFewerFilesThanCurves(t *testing.T) {
	rows := hotspots(60000, 2)
	extent := spatial.EmptyBound()
	for _, r := range rows {
		extent = extent.Extend(r)
	}
	windows, err := DataWindows(rows, extent, 0.01, 400, 9)
	require.NoError(t, err)
	mean := func(name string) float64 {
		o, err := CurveOrder(name)
		require.NoError(t, err)
		planned, err := FilesPlanned(rows, o, SortOptions{Extent: extent}, 40, windows)
		require.NoError(t, err)
		sum := 0
		for _, p := range planned {
			sum += p
		}
		return float64(sum) / float64(len(planned))
	}
	kd := mean("kd")
	for _, c := range []string{"linear", "zorder", "hilbert", "str"} {
		assert.Less(t, kd, mean(c), "kd against %s", c)
	}
}

// TestKDSplitsAcrossTheLongSide checks that the cost picks the axis: on
// points in a band far thinner than a window (one point stretches the
// extent to a square), a split across y saves no window, so every split
// is across x.
func TestKDSplitsAcrossTheLongSide(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	rows := make([]spatial.Bound, 20000)
	for i := range rows {
		x, y := rng.Float64()*100, rng.Float64()
		if i == 0 {
			y = 100
		}
		rows[i] = spatial.Bound{MinX: x, MinY: y, MaxX: x, MaxY: y}
	}
	rec := BoundsBatch(rows)
	defer rec.Release()
	s := frozenSorter(t, Order{Curve: CurveKD}, rec, 8)
	tree := s.scale[0].kdTree()
	require.Len(t, tree.nodes, 7)
	for i, n := range tree.nodes {
		assert.EqualValues(t, 0, n.Axis, "node %d", i)
	}
}

// TestScaleJSONKeepsLayouts checks that a scale decoded in another
// process keys rows as the original for the layouts whose scale carries
// more than normalisation: str's slabs and kd's tree.
func TestScaleJSONKeepsLayouts(t *testing.T) {
	rows := hotspots(20000, 3)
	rec := BoundsBatch(rows)
	defer rec.Release()
	for _, c := range []Curve{CurveSTR, CurveKD} {
		s := frozenSorter(t, Order{Curve: c}, rec, 30)
		want, err := s.Keys(rec)
		require.NoError(t, err)
		b, err := json.Marshal(Scale{norms: s.scale})
		require.NoError(t, err)
		var back Scale
		require.NoError(t, json.Unmarshal(b, &back))
		plain, err := NewSorter(Order{Curve: c}, rec.Schema(), SortOptions{Files: 1})
		require.NoError(t, err)
		d, err := plain.WithScale(back)
		require.NoError(t, err)
		got, err := d.Keys(rec)
		require.NoError(t, err)
		assert.Equal(t, want, got, "%s", c)
	}
}

func TestScaleJSONRefusesBadKDTree(t *testing.T) {
	for _, tc := range []string{
		`{"dims":[{"kind":0,"kd":[{"a":0,"c":5,"l":0,"h":-1}],"kd_leaves":2},{"kind":0}]}`,  // a loop to itself
		`{"dims":[{"kind":0,"kd":[{"a":0,"c":5,"l":-1,"h":-9}],"kd_leaves":2},{"kind":0}]}`, // leaf 8 of 2
		`{"dims":[{"kind":0,"kd":[{"a":3,"c":5,"l":-1,"h":-2}],"kd_leaves":2},{"kind":0}]}`, // axis 3
	} {
		var sc Scale
		err := json.Unmarshal([]byte(tc), &sc)
		require.Error(t, err, tc)
		assert.Contains(t, err.Error(), "kd node 0")
	}
}

// TestKDBuildIsBounded checks the tree's size limits: no more leaves than
// files, nor than the sample affords, nor than its key bits hold.
func TestKDBuildIsBounded(t *testing.T) {
	xs, ys := make([]float64, 1000), make([]float64, 1000)
	for i := range xs {
		xs[i], ys[i] = float64(i%37), float64(i%91)
	}
	cell := func(v float64) uint32 { return uint32(v * 1000) }
	assert.Equal(t, 5, buildKD(xs, ys, cell, cell, spatial.EmptyBound(), 5, nil).leaves)
	assert.Equal(t, 1000/kdMinLeafRows, buildKD(xs, ys, cell, cell, spatial.EmptyBound(), 500, nil).leaves)
	assert.Equal(t, 1, buildKD(nil, nil, cell, cell, spatial.EmptyBound(), 500, nil).leaves)
	assert.Less(t, 1000/kdMinLeafRows, int(math.Exp2(KDLeafBits)))
}

// TestKDSplitsForTheGivenWindows checks that SortOptions.Windows replace
// the default windows: on uniform points, windows as wide as the data
// but thin in y are crossed by every split across x and by few across y,
// so every split is across y; windows as tall as the data but thin in x
// give the opposite.
func TestKDSplitsForTheGivenWindows(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	rows := make([]spatial.Bound, 20000)
	for i := range rows {
		x, y := rng.Float64()*100, rng.Float64()*100
		rows[i] = spatial.Bound{MinX: x, MinY: y, MaxX: x, MaxY: y}
	}
	rec := BoundsBatch(rows)
	defer rec.Release()
	band := func(wide bool) []WindowSet {
		ws := make([]spatial.Bound, 300)
		for i := range ws {
			c := rng.Float64() * 100
			ws[i] = spatial.Bound{MinX: 0, MinY: c, MaxX: 100, MaxY: c + 0.5}
			if !wide {
				ws[i] = spatial.Bound{MinX: c, MinY: 0, MaxX: c + 0.5, MaxY: 100}
			}
		}
		return []WindowSet{{Name: "band", Windows: ws}}
	}
	for _, tc := range []struct {
		wide bool
		axis uint8
	}{{true, 1}, {false, 0}} {
		s, err := NewSorter(Order{Curve: CurveKD}, rec.Schema(), SortOptions{Files: 8, Windows: band(tc.wide)})
		require.NoError(t, err)
		st := s.NewStats(len(rows))
		require.NoError(t, st.Add(rec))
		s, err = s.WithScale(st.Scale(spatial.EmptyBound()))
		require.NoError(t, err)
		tree := s.scale[0].kdTree()
		require.Len(t, tree.nodes, 7)
		for i, n := range tree.nodes {
			assert.Equal(t, tc.axis, n.Axis, "wide %v: node %d", tc.wide, i)
		}
	}
}

// BenchmarkKDBuild times building a kd tree from a full sample (65,536
// clustered points) for 50 and for 500 files.
func BenchmarkKDBuild(b *testing.B) {
	pts := hotspots(1<<16, 3)
	xs, ys := make([]float64, len(pts)), make([]float64, len(pts))
	for i, p := range pts {
		xs[i], ys[i] = p.Center()
	}
	cell := func(v float64) uint32 { return uint32((v + 180) * 1e6) }
	for _, files := range []int{50, 500} {
		b.Run(strconv.Itoa(files), func(b *testing.B) {
			for b.Loop() {
				buildKD(xs, ys, cell, cell, spatial.EmptyBound(), files, nil)
			}
		})
	}
}

// TestKDSplitPositionsStayInBand checks that costed split positions move
// some leaves off the even share, and keep every leaf between 0.85 and
// 1.2 shares (give or take a point of rounding per level).
func TestKDSplitPositionsStayInBand(t *testing.T) {
	pts := hotspots(1<<14, 5)
	xs, ys := make([]float64, len(pts)), make([]float64, len(pts))
	for i, p := range pts {
		xs[i], ys[i] = p.Center()
	}
	cell := func(v float64) uint32 { return uint32((v + 180) * 1e6) }
	const files = 40
	tree := buildKD(xs, ys, cell, cell, spatial.EmptyBound(), files, nil)
	require.Equal(t, files, tree.leaves)
	counts := make([]int, files)
	for i := range xs {
		counts[tree.leaf(cell(xs[i]), cell(ys[i]))]++
	}
	share := float64(len(xs)) / files
	moved := 0
	for leaf, c := range counts {
		assert.GreaterOrEqual(t, float64(c), 0.85*share-8, "leaf %d", leaf)
		assert.LessOrEqual(t, float64(c), 1.2*share+8, "leaf %d", leaf)
		if math.Abs(float64(c)-share) > 0.05*share {
			moved++
		}
	}
	assert.Positive(t, moved, "no split moved off the even share")
}
