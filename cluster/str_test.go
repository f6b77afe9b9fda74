package cluster

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/spatial"
)

// pointRows returns n points in [0, 100]², skewed towards x = 0 (so that
// x quantiles are far from equal widths), every fiftieth one a copy of the
// point (50, 50) (equal keys), and one row without a position.
func pointRows(rng *rand.Rand, n int) []row {
	rows := make([]row, n)
	for i := range rows {
		u := rng.Float64()
		x, y := 100*u*u*u, rng.Float64()*100
		if i%50 == 3 {
			x, y = 50, 50
		}
		b := spatial.Bound{MinX: x, MinY: y, MaxX: x, MaxY: y}
		rows[i] = row{id: int64(i), box: &b}
	}
	rows[n/2].box = nil
	return rows
}

// TestSTROrder checks the layout on one batch (whose keys Keys computes as
// Sort does): sqrt(files) slabs of about equal row counts whose x ranges
// do not overlap, in slab order; y ascending in even slabs and descending
// in odd ones; equal keys in input order; rows without a position last.
func TestSTROrder(t *testing.T) {
	rows := pointRows(rand.New(rand.NewPCG(1, 2)), 10000)
	recs := batches(t, rows, len(rows))
	s := mustSorter(t, "str()", SortOptions{Files: 100})
	keys, err := s.Keys(recs[0])
	require.NoError(t, err)
	ids := sortedIDs(t, s, recs, 1000)
	checkPermutation(t, ids, len(rows))
	require.Nil(t, rows[ids[len(ids)-1]].box, "the row without a position sorts last")
	ids = ids[:len(ids)-1]

	count := map[uint64]int{}
	lo, hi := map[uint64]float64{}, map[uint64]float64{}
	for i, id := range ids {
		r, slab := rows[id], keys[id]>>32
		count[slab]++
		if count[slab] == 1 {
			lo[slab], hi[slab] = r.box.MinX, r.box.MinX
		}
		lo[slab], hi[slab] = min(lo[slab], r.box.MinX), max(hi[slab], r.box.MinX)
		if i == 0 {
			continue
		}
		p := rows[ids[i-1]]
		pslab := keys[p.id] >> 32
		require.LessOrEqual(t, pslab, slab, "row %d: slab goes back", i)
		if pslab != slab {
			continue
		}
		switch {
		case keys[p.id] == keys[r.id]:
			require.Less(t, p.id, r.id, "equal keys out of input order at %d", i)
		case slab%2 == 0:
			require.LessOrEqual(t, p.box.MinY, r.box.MinY, "slab %d row %d: y goes down", slab, i)
		default:
			require.GreaterOrEqual(t, p.box.MinY, r.box.MinY, "slab %d row %d: y goes up", slab, i)
		}
	}
	require.Len(t, count, STRSlabs(100))
	for k := range uint64(len(count)) {
		assert.InDelta(t, 1000, count[k], 200, "slab %d rows (200 equal points move together)", k)
		if k > 0 {
			assert.LessOrEqual(t, hi[k-1], lo[k], "slab %d overlaps slab %d in x", k-1, k)
		}
	}
}

// TestSTRSlabsFollowFiles checks the slab count and boundaries for a few
// file counts: boundary i falls in the middle of file round(i*files/k).
func TestSTRSlabsFollowFiles(t *testing.T) {
	rows := pointRows(rand.New(rand.NewPCG(3, 4)), 6000)
	rows[len(rows)/2].box = &spatial.Bound{MinX: 1, MinY: 1, MaxX: 1, MaxY: 1}
	for i := range rows {
		if i%50 == 3 { // distinct x everywhere: exact quantiles
			x := float64(i) / 100
			rows[i].box = &spatial.Bound{MinX: x, MinY: 7, MaxX: x, MaxY: 7}
		}
	}
	recs := batches(t, rows, len(rows))
	for _, tc := range []struct {
		files int
		cuts  []float64 // slab boundaries, in files
	}{
		{1, nil}, {2, nil}, {3, []float64{1.5}}, {12, []float64{3.5, 7.5}},
		{30, []float64{5.5, 11.5, 17.5, 23.5}}, {60, []float64{7.5, 14.5, 22.5, 29.5, 37.5, 44.5, 52.5}},
	} {
		s := mustSorter(t, "str()", SortOptions{Files: tc.files})
		keys, err := s.Keys(recs[0])
		require.NoError(t, err)
		count := make([]int, STRSlabs(tc.files))
		for _, k := range keys {
			require.Less(t, int(k>>32), len(count), "%d files: slab %d", tc.files, k>>32)
			count[k>>32]++
		}
		require.Len(t, tc.cuts, len(count)-1, "%d files", tc.files)
		below := 0
		for i, c := range tc.cuts {
			below += count[i]
			assert.Equal(t, int(c*float64(len(rows))/float64(tc.files)), below, "%d files: rows below boundary %d", tc.files, i+1)
		}
	}
}

// TestSTRStable checks that sorting rows already in str order leaves them
// as they are: the same rows give the same slabs, and ties keep their
// order.
func TestSTRStable(t *testing.T) {
	rows := pointRows(rand.New(rand.NewPCG(5, 6)), 5000)
	recs := batches(t, rows, 1200, 800)
	s := mustSorter(t, "str()", SortOptions{Files: 20})
	sorted, err := s.Sort(recs, 700)
	require.NoError(t, err)
	defer func() {
		for _, r := range sorted {
			r.Release()
		}
	}()
	var first []int64
	for _, r := range sorted {
		first = append(first, r.Column(0).(interface{ Int64Values() []int64 }).Int64Values()...)
	}
	assert.Equal(t, first, sortedIDs(t, s, sorted, 700))
}

func TestSTRErrors(t *testing.T) {
	for _, expr := range []string{"str(ts)", "str(score)"} {
		o, err := ParseOrder(expr)
		require.NoError(t, err)
		_, err = NewSorter(o, testSchema(), SortOptions{})
		require.ErrorIs(t, err, ErrSortOrder, expr)
		assert.Contains(t, err.Error(), "want one spatial column", expr)
	}
	_, err := NewSorter(Order{Curve: CurveSTR}, testSchema(), SortOptions{Files: -1})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "-1 files")
}
