package cuts

import (
	"context"
	"errors"
	"iter"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// idBatch is a batch of the ids [from, from+n).
func idBatch(from, n int64) arrow.RecordBatch {
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	for i := from; i < from+n; i++ {
		b.Append(i)
	}
	col := b.NewArray()
	defer col.Release()
	sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	return array.NewRecordBatch(sc, []arrow.Array{col}, n)
}

// collect is a Write that returns the ids of file i's rows, failing file
// failAt (1-based; 0 for none) after reading it.
func collect(failAt int) func(context.Context, int, iter.Seq2[arrow.RecordBatch, error]) ([][]int64, error) {
	return func(_ context.Context, i int, rows iter.Seq2[arrow.RecordBatch, error]) ([][]int64, error) {
		var ids []int64
		for rec := range rows {
			ids = append(ids, rec.Column(0).(*array.Int64).Int64Values()...)
			rec.Release()
		}
		if i+1 == failAt {
			return [][]int64{ids}, errors.New("disk full")
		}
		return [][]int64{ids}, nil
	}
}

// TestSinkCutsInOrder checks that batches are cut at the file row counts,
// across batch boundaries, and that the files come back in order whatever
// the lanes.
func TestSinkCutsInOrder(t *testing.T) {
	for _, lanes := range []int{1, 3} {
		s := NewSink(t.Context(), SinkConfig[[]int64]{FileRows: func(int) int64 { return 10 }, Lanes: lanes, Queue: 1, Write: collect(0)})
		for i := int64(0); i < 5; i++ {
			require.NoError(t, s.Write(idBatch(7*i, 7)))
		}
		files, err := s.Close()
		require.NoError(t, err)
		require.Len(t, files, 4)
		var all []int64
		for i, f := range files {
			assert.Len(t, f, []int{10, 10, 10, 5}[i])
			all = append(all, f...)
		}
		for i, id := range all {
			assert.Equal(t, int64(i), id)
		}
	}
}

// TestSinkFailure checks that a file that fails fails the sink, naming the
// file, and that what was written still comes back for cleanup.
func TestSinkFailure(t *testing.T) {
	s := NewSink(t.Context(), SinkConfig[[]int64]{FileRows: func(int) int64 { return 4 }, Lanes: 1, Write: collect(2)})
	var err error
	for i := int64(0); i < 6 && err == nil; i++ {
		err = s.Write(idBatch(2*i, 2))
	}
	files, cerr := s.Close()
	require.Error(t, cerr)
	assert.Contains(t, cerr.Error(), "file 2: disk full")
	assert.GreaterOrEqual(t, len(files), 2)
}
