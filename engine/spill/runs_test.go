package spill_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/engine/spill"
)

var idSchema = arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)

// idBatch returns a batch of the ids lo..hi-1.
func idBatch(lo, hi int) arrow.RecordBatch {
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	for i := lo; i < hi; i++ {
		b.Append(int64(i))
	}
	col := b.NewArray()
	defer col.Release()
	return array.NewRecordBatch(idSchema, []arrow.Array{col}, int64(hi-lo))
}

// TestMergeIsStable checks that merging runs cut from one input, each
// sorted stably, gives the stable order of the whole input: equal keys
// (there are many) keep their input order across runs, whether the runs
// are merged at once or first into longer runs (fan-in 3), and whether
// the order is merged whole or in parts at once (MergeParts), cut at
// ranks that fall inside stretches of equal keys.
func TestMergeIsStable(t *testing.T) {
	for _, tc := range []struct {
		name                    string
		fanIn, batchRows, out   int
		rows, distinctKeys, cut int
	}{
		{"one pass", 64, 7, 11, 5000, 40, 600},
		{"several passes", 3, 5, 13, 5000, 40, 300},
		{"unique keys", 4, 64, 1000, 3000, 1 << 30, 250},
		{"one key", 8, 16, 100, 2000, 1, 300},
	} {
		rng := rand.New(rand.NewPCG(7, uint64(tc.fanIn)))
		keys := make([]uint64, tc.rows)
		for i := range keys {
			keys[i] = uint64(rng.IntN(tc.distinctKeys))
			if tc.distinctKeys == 1 {
				keys[i] = ^uint64(0) // the largest key: the bisection's edge
			}
		}
		want := make([]int64, tc.rows)
		for i := range want {
			want[i] = int64(i)
		}
		slices.SortStableFunc(want, func(a, b int64) int { return cmpKey(keys[a], keys[b]) })
		for _, cuts := range [][]int64{nil, {int64(tc.rows) / 2}, {0, 1, 777, 777, 1999, int64(tc.rows) - 1, int64(tc.rows)}} {
			t.Run(fmt.Sprintf("%s/cuts %v", tc.name, cuts), func(t *testing.T) {
				root := t.TempDir()
				rs := writeRuns(t, root, keys, tc.cut, tc.batchRows, rand.New(rand.NewPCG(11, uint64(tc.rows))))
				if tc.name == "several passes" || tc.name == "unique keys" {
					require.Greater(t, rs.Len(), tc.fanIn, "more runs than one merge reads")
				} else {
					require.Greater(t, rs.Len(), 1)
				}
				parts := make([][]int64, len(cuts)+1)
				var mu sync.Mutex
				require.NoError(t, rs.MergeParts(tc.fanIn, 2, tc.batchRows, tc.out, cuts, func(k int, rec arrow.RecordBatch) error {
					defer rec.Release()
					assert.LessOrEqual(t, int(rec.NumRows()), tc.out)
					mu.Lock()
					defer mu.Unlock()
					parts[k] = append(parts[k], rec.Column(0).(*array.Int64).Int64Values()...)
					return nil
				}))
				var got []int64
				at := int64(0)
				for k, p := range parts {
					end := int64(tc.rows)
					if k < len(cuts) {
						end = cuts[k]
					}
					assert.Len(t, p, int(end-at), "part %d holds ranks [%d, %d)", k, at, end)
					at = end
					got = append(got, p...)
				}
				require.Equal(t, want, got)
				left, err := os.ReadDir(dirPath(t, root))
				require.NoError(t, err)
				assert.Len(t, left, 1, "only the lock file is left: every run file was removed once read")
			})
		}
	}
}

// writeRuns spills rows 0..len(keys)-1 with their keys as runs of up to
// cut rows in root's spill directory, each run two batches sorted stably
// by key and written batchRows rows to a batch.
func writeRuns(t *testing.T, root string, keys []uint64, cut, batchRows int, rng *rand.Rand) *spill.Runs {
	t.Helper()
	dir, _, err := spill.OpenDir(root)
	require.NoError(t, err)
	t.Cleanup(func() { dir.Close() })
	rs := spill.NewRuns(dir, idSchema)
	for lo := 0; lo < len(keys); {
		hi := min(len(keys), lo+1+rng.IntN(cut))
		mid := lo + (hi-lo)/2
		recs := []arrow.RecordBatch{idBatch(lo, mid), idBatch(mid, hi)}
		perm := make([]int32, hi-lo)
		for i := range perm {
			perm[i] = int32(i)
		}
		slices.SortStableFunc(perm, func(a, b int32) int { return cmpKey(keys[lo+int(a)], keys[lo+int(b)]) })
		sorted := make([]uint64, len(perm))
		for i, p := range perm {
			sorted[i] = keys[lo+int(p)]
		}
		require.NoError(t, rs.Write(recs, perm, sorted, batchRows))
		for _, r := range recs {
			r.Release()
		}
		lo = hi
	}
	return rs
}

// TestMergePartsStopsOnAFailedPart fails one part's first batch: the
// merge returns that error, the other part stops, and no run file is left.
func TestMergePartsStopsOnAFailedPart(t *testing.T) {
	root := t.TempDir()
	keys := make([]uint64, 4000)
	for i := range keys {
		keys[i] = uint64(i % 97)
	}
	rs := writeRuns(t, root, keys, 500, 10, rand.New(rand.NewPCG(1, 2)))
	boom := errors.New("disk on fire")
	var other atomic.Int64
	failed := make(chan struct{})
	err := rs.MergeParts(64, 2, 10, 10, []int64{2000}, func(k int, rec arrow.RecordBatch) error {
		defer rec.Release()
		if k == 0 {
			close(failed)
			return boom
		}
		<-failed // the other part's rows come once part 0 has failed
		other.Add(rec.NumRows())
		return nil
	})
	require.ErrorIs(t, err, boom)
	assert.Less(t, other.Load(), int64(2000), "the other part stopped before its end")
	left, err := os.ReadDir(dirPath(t, root))
	require.NoError(t, err)
	assert.Len(t, left, 1, "only the lock file is left")
}

// TestMergePartsRefusesCutsOutOfOrder: a cut below the one before it, or
// past the rows, is an error, and the runs are still removed.
func TestMergePartsRefusesCutsOutOfOrder(t *testing.T) {
	for _, cuts := range [][]int64{{300, 200}, {1001}, {-1}} {
		root := t.TempDir()
		keys := make([]uint64, 1000)
		rs := writeRuns(t, root, keys, 300, 50, rand.New(rand.NewPCG(3, 4)))
		err := rs.MergeParts(64, 2, 50, 50, cuts, func(_ int, rec arrow.RecordBatch) error {
			rec.Release()
			return nil
		})
		require.ErrorContains(t, err, "out of order", "%v", cuts)
		left, err := os.ReadDir(dirPath(t, root))
		require.NoError(t, err)
		assert.Len(t, left, 1, "only the lock file is left")
	}
}

func cmpKey(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// dirPath is the one spill directory under root.
func dirPath(t *testing.T, root string) string {
	t.Helper()
	entries, err := os.ReadDir(root)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	return root + "/" + entries[0].Name()
}

// TestShrinks plans the merges before the last: only as many runs as the
// last merge must be spared are merged, consecutive runs each time, and a
// pass that cannot reach the fan-in merges as many as it can.
func TestShrinks(t *testing.T) {
	for _, tc := range []struct {
		n, fanIn int
		want     [][2]int
	}{
		{8, 8, nil},
		{3, 8, nil},
		{9, 8, [][2]int{{0, 2}}},
		{10, 8, [][2]int{{0, 3}}},
		{480, 256, [][2]int{{0, 225}}},
		{20, 8, [][2]int{{0, 8}, {8, 14}}},
		{10, 2, [][2]int{{0, 2}, {2, 4}, {4, 6}, {6, 8}, {8, 10}}},
		{11, 2, [][2]int{{0, 2}, {2, 4}, {4, 6}, {6, 8}, {8, 10}}},
	} {
		got := spill.Shrinks(tc.n, tc.fanIn)
		assert.Equal(t, tc.want, got, "%d runs, fan-in %d", tc.n, tc.fanIn)
		left := tc.n
		for _, r := range got {
			assert.LessOrEqual(t, r[1]-r[0], tc.fanIn)
			left -= r[1] - r[0] - 1
		}
		if tc.n <= tc.fanIn*tc.fanIn/2 {
			assert.Equal(t, min(tc.n, tc.fanIn), left, "%d runs, fan-in %d: runs left for the last merge", tc.n, tc.fanIn)
		}
	}
}

// TestMergeRewritesOnlyWhatItMust merges ten runs of equal size with a
// fan-in of 8: three of them are merged into one first, so the bytes
// spilled grow by about three runs' worth, not by every run's.
func TestMergeRewritesOnlyWhatItMust(t *testing.T) {
	dir, _, err := spill.OpenDir(t.TempDir())
	require.NoError(t, err)
	defer dir.Close()
	rs := spill.NewRuns(dir, idSchema)
	const runs, rows = 10, 1000
	for i := range runs {
		rec := idBatch(i*rows, (i+1)*rows)
		perm := make([]int32, rows)
		keys := make([]uint64, rows)
		for j := range perm {
			perm[j] = int32(j)
			keys[j] = uint64(j*runs + i)
		}
		require.NoError(t, rs.Write([]arrow.RecordBatch{rec}, perm, keys, 100))
		rec.Release()
	}
	written := rs.DiskBytes()
	n := 0
	require.NoError(t, rs.Merge(8, 2, 100, 256, func(rec arrow.RecordBatch) error {
		defer rec.Release()
		for _, id := range rec.Column(0).(*array.Int64).Int64Values() {
			require.Equal(t, int64(n%runs*rows+n/runs), id, "row %d", n)
			n++
		}
		return nil
	}))
	assert.Equal(t, runs*rows, n)
	again := float64(rs.DiskBytes()-written) / float64(written)
	assert.InDelta(t, 0.3, again, 0.03, "share of the bytes spilled again")
}

// TestFitOpenFiles checks that the merges read no more runs at once than
// the process may open (two files a run, 256 files kept for the rest),
// giving up lanes before fan-in.
func TestFitOpenFiles(t *testing.T) {
	for _, tc := range []struct {
		fanIn, lanes, limit int
		wantFanIn, wantLane int
	}{
		{512, 2, 0, 512, 2},     // limit unknown
		{512, 2, 20000, 512, 2}, // room for both
		{512, 2, 1500, 512, 1},  // room for one merge of 512
		{512, 2, 1024, 384, 1},  // not even that
		{1, 0, 1024, 2, 1},      // floors
		{512, 2, 100, 2, 1},     // almost nothing open-able
		{16, 2, 1024, 16, 2},    // small fan-ins untouched
		{256, 2, 1024 + 256, 256, 2},
	} {
		fanIn, lanes := spill.FitOpenFiles(tc.fanIn, tc.lanes, tc.limit)
		assert.Equal(t, tc.wantFanIn, fanIn, "%+v", tc)
		assert.Equal(t, tc.wantLane, lanes, "%+v", tc)
		if tc.limit > 0 {
			assert.LessOrEqual(t, 2*fanIn*lanes, max(tc.limit-256, 4), "%+v", tc)
		}
	}
}
