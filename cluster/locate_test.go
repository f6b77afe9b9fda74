package cluster

import (
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/assert"
)

// TestLocateIrregularBatches checks locate against counting rows batch by
// batch, over batches of uneven sizes: empty ones (first, between, last),
// single rows, and one far longer than the rest.
func TestLocateIrregularBatches(t *testing.T) {
	sc := arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int32}}, nil)
	for _, sizes := range [][]int{
		{5},
		{0, 3, 0, 0, 1, 7, 0},
		{1, 1, 1, 1},
		{1000, 1, 3, 64, 65, 0, 2},
		{7, 7, 7, 7, 3},
	} {
		var recs []arrow.RecordBatch
		var want []rowLoc
		for b, n := range sizes {
			bld := array.NewInt32Builder(memory.DefaultAllocator)
			for i := range n {
				bld.Append(int32(i))
				want = append(want, rowLoc{int32(b), int32(i)})
			}
			col := bld.NewArray()
			recs = append(recs, array.NewRecordBatch(sc, []arrow.Array{col}, int64(n)))
			col.Release()
			bld.Release()
		}
		rows := make([]int32, len(want))
		for i, p := range rand.New(rand.NewPCG(1, uint64(len(sizes)))).Perm(len(want)) {
			rows[i] = int32(p)
		}
		got := locate(recs, rows)
		for k, r := range rows {
			assert.Equal(t, want[r], got[k], "sizes %v: row %d", sizes, r)
		}
		assert.Empty(t, locate(recs, nil))
		for _, r := range recs {
			r.Release()
		}
	}
}
