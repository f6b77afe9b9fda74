package engine

import (
	"context"
	"iter"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/engine/verify"
	"github.com/geocompact/geocompact/table"
)

// readBackFormat is a table.Format whose ReadBack records how many files
// each call reads and returns one batch of each file's rows.
type readBackFormat struct {
	table.Format
	calls []int
}

func (f *readBackFormat) ReadBack(_ context.Context, _ []table.PlanFile, written []table.OutFile) (iter.Seq2[arrow.RecordBatch, error], error) {
	f.calls = append(f.calls, len(written))
	return func(yield func(arrow.RecordBatch, error) bool) {
		for _, w := range written {
			b := array.NewInt64Builder(memory.DefaultAllocator)
			for i := range w.Records {
				b.Append(i)
			}
			col := b.NewArray()
			sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
			rec := array.NewRecordBatch(sc, []arrow.Array{col}, w.Records)
			col.Release()
			b.Release()
			if !yield(rec, nil) {
				return
			}
		}
	}, nil
}

// TestReadBackOneFileAtATime checks that verification reads the files a
// group wrote one per ReadBack call, so a format's scan never holds
// several large files' batches at once, and that every row is counted.
func TestReadBackOneFileAtATime(t *testing.T) {
	f := &readBackFormat{}
	ex := &execution{tf: f}
	written := []table.OutFile{{Path: "a", Records: 3}, {Path: "b", Records: 5}, {Path: "c", Records: 2}}
	d := verify.NewDigest()
	require.NoError(t, ex.readBack(t.Context(), nil, written, -1, [4]int{-1, -1, -1, -1}, &d))
	assert.Equal(t, []int{1, 1, 1}, f.calls)
	assert.Equal(t, int64(10), d.Rows)
}
