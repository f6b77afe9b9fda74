package spill_test

import (
	"math/rand/v2"
	"os"
	"slices"
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
// are merged at once or first into longer runs (fan-in 3).
func TestMergeIsStable(t *testing.T) {
	for _, tc := range []struct {
		name                    string
		fanIn, batchRows, out   int
		rows, distinctKeys, cut int
	}{
		{"one pass", 64, 7, 11, 5000, 40, 600},
		{"several passes", 3, 5, 13, 5000, 40, 300},
		{"unique keys", 4, 64, 1000, 3000, 1 << 30, 250},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, uint64(tc.fanIn)))
			keys := make([]uint64, tc.rows)
			for i := range keys {
				keys[i] = uint64(rng.IntN(tc.distinctKeys))
			}
			root := t.TempDir()
			dir, _, err := spill.OpenDir(root)
			require.NoError(t, err)
			defer dir.Close()
			rs := spill.NewRuns(dir, idSchema)
			for lo := 0; lo < tc.rows; {
				hi := min(tc.rows, lo+1+rng.IntN(tc.cut))
				// A run of two batches, sorted stably by key.
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
				require.NoError(t, rs.Write(recs, perm, sorted, tc.batchRows))
				for _, r := range recs {
					r.Release()
				}
				lo = hi
			}
			if tc.name != "one pass" {
				require.Greater(t, rs.Len(), tc.fanIn, "more runs than one merge reads")
			} else {
				require.Greater(t, rs.Len(), 1)
			}
			var got []int64
			require.NoError(t, rs.Merge(tc.fanIn, tc.batchRows, tc.out, func(rec arrow.RecordBatch) error {
				defer rec.Release()
				assert.LessOrEqual(t, int(rec.NumRows()), tc.out)
				got = append(got, rec.Column(0).(*array.Int64).Int64Values()...)
				return nil
			}))
			want := make([]int64, tc.rows)
			for i := range want {
				want[i] = int64(i)
			}
			slices.SortStableFunc(want, func(a, b int64) int { return cmpKey(keys[a], keys[b]) })
			require.Equal(t, want, got)
			left, err := os.ReadDir(dirPath(t, root))
			require.NoError(t, err)
			assert.Len(t, left, 1, "only the lock file is left: every run file was removed once read")
		})
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
