package cluster

import (
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/spatial"
)

func pt(x, y float64) spatial.Bound { return spatial.Bound{MinX: x, MinY: y, MaxX: x, MaxY: y} }

// TestFilesPlannedExact lays out eight points on a hand-checked case:
// linear order sorts by x, four files of two rows each, one row without a
// box (it sorts last and adds nothing to its file's box).
func TestFilesPlannedExact(t *testing.T) {
	rows := []spatial.Bound{
		pt(7, 0), pt(0, 0), spatial.EmptyBound(), pt(3, 3), pt(1, 1),
		pt(6, 6), pt(2, 2), pt(4, 4), pt(5, 5),
	}
	lin, err := CurveOrder("linear")
	require.NoError(t, err)
	fb, err := FileBounds(rows, lin, SortOptions{}, 4)
	require.NoError(t, err)
	// 9 rows into 4 runs: 2, 2, 2, 3 rows (the empty box last).
	assert.Equal(t, []spatial.Bound{
		{MinX: 0, MinY: 0, MaxX: 1, MaxY: 1},
		{MinX: 2, MinY: 2, MaxX: 3, MaxY: 3},
		{MinX: 4, MinY: 4, MaxX: 5, MaxY: 5},
		{MinX: 6, MinY: 0, MaxX: 7, MaxY: 6},
	}, fb)

	windows := []spatial.Bound{
		{MinX: 1, MinY: 1, MaxX: 2, MaxY: 2},         // touches files 0 and 1 at corners
		{MinX: 0.2, MinY: 0.5, MaxX: 0.8, MaxY: 0.6}, // inside file 0
		{MinX: 5.5, MinY: 2, MaxX: 6.5, MaxY: 2.5},   // file 3 only (file 2 ends at x=5)
		{MinX: 10, MinY: 10, MaxX: 11, MaxY: 11},     // nothing
		{MinX: -1, MinY: -1, MaxX: 8, MaxY: 8},       // everything
	}
	got, err := FilesPlanned(rows, lin, SortOptions{}, 4, windows)
	require.NoError(t, err)
	assert.Equal(t, []int{2, 1, 1, 0, 4}, got)

	// More files than rows: the extra files are empty and plan nothing.
	fb, err = FileBounds(rows[:2], lin, SortOptions{}, 3)
	require.NoError(t, err)
	assert.Equal(t, []spatial.Bound{spatial.EmptyBound(), pt(0, 0), pt(7, 0)}, fb)
	assert.Equal(t, []int{2}, CountPlanned(fb, windows[4:]))

	_, err = FileBounds(rows, lin, SortOptions{}, 0)
	require.Error(t, err)
	_, err = FileBounds(rows, Order{Curve: CurveHilbert, Columns: []string{"nope"}}, SortOptions{}, 2)
	require.ErrorIs(t, err, ErrSortOrder)
}

// TestFileBoundsFollowsTheSorter checks that FileBounds cuts the order a
// Sorter gives, for every candidate layout: at even counts, or for kd
// where the leaf changes (RunFiles of the leaves' row counts).
func TestFileBoundsFollowsTheSorter(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	rows := make([]spatial.Bound, 999)
	for i := range rows {
		rows[i] = pt(rng.Float64()*360-180, rng.Float64()*180-90)
	}
	rec := BoundsBatch(rows)
	defer rec.Release()
	for _, name := range AutoCandidates() {
		o, err := CurveOrder(name)
		require.NoError(t, err)
		s, err := NewSorter(o, rec.Schema(), SortOptions{Extent: spatial.World, Files: 10})
		require.NoError(t, err)
		perm, keys, err := s.SortedKeys([]arrow.RecordBatch{rec})
		require.NoError(t, err)
		counts := make([]int64, 10)
		for f := range counts {
			counts[f] = int64((f+1)*999/10 - f*999/10)
		}
		if shift, ok := s.CutShift(); ok {
			leaves := NewCellRuns(shift)
			leaves.Add(keys)
			counts = RunFiles(leaves.Runs(), 10)
		}
		fb, err := FileBounds(rows, o, SortOptions{Extent: spatial.World}, 10)
		require.NoError(t, err)
		require.Len(t, fb, len(counts))
		at := 0
		for f, c := range counts {
			want := spatial.EmptyBound()
			for _, r := range perm[at : at+int(c)] {
				want = want.Extend(rows[r])
			}
			at += int(c)
			assert.Equal(t, want, fb[f], "%s file %d", name, f)
		}
	}
}

func TestDataWindows(t *testing.T) {
	rows := []spatial.Bound{pt(10, 20), spatial.EmptyBound(), {MinX: -50, MinY: -10, MaxX: -40, MaxY: 0}}
	a, err := DataWindows(rows, spatial.World, 0.01, 30, 5)
	require.NoError(t, err)
	b, err := DataWindows(rows, spatial.World, 0.01, 30, 5)
	require.NoError(t, err)
	assert.Equal(t, a, b)
	c, err := DataWindows(rows, spatial.World, 0.01, 30, 6)
	require.NoError(t, err)
	assert.NotEqual(t, a, c)
	require.Len(t, a, 30)
	for _, w := range a {
		assert.InDelta(t, 36, w.Width(), 1e-9)
		assert.InDelta(t, 18, w.Height(), 1e-9)
		cx, cy := w.Center()
		onRow := (cx == 10 && cy == 20) || (cx == -45 && cy == -5)
		assert.True(t, onRow, "window centred at (%g, %g)", cx, cy)
	}
	for _, tc := range []struct {
		name   string
		rows   []spatial.Bound
		extent spatial.Bound
		area   float64
	}{
		{"no rows", nil, spatial.World, 0.01},
		{"no boxes", []spatial.Bound{spatial.EmptyBound()}, spatial.World, 0.01},
		{"no extent", rows, spatial.EmptyBound(), 0.01},
		{"area 0", rows, spatial.World, 0},
		{"area above 1", rows, spatial.World, 1.5},
	} {
		_, err := DataWindows(tc.rows, tc.extent, tc.area, 3, 1)
		assert.ErrorIs(t, err, ErrWindows, tc.name)
	}
}
