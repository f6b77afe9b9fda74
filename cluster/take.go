package cluster

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// take gathers the rows of recs in perm order (perm holds row numbers over
// the concatenation of recs) into batches of at most batchRows rows. It
// works a column at a time: concatenate the column's chunks, Take, slice.
func take(recs []arrow.RecordBatch, perm []int32, batchRows int, schema *arrow.Schema, mem memory.Allocator) (_ []arrow.RecordBatch, err error) {
	n := len(perm)
	nb := (n + batchRows - 1) / batchRows
	cols := make([][]arrow.Array, nb)
	for b := range cols {
		cols[b] = make([]arrow.Array, schema.NumFields())
	}
	defer func() { // release the slices; records hold their own references
		for _, cs := range cols {
			for _, c := range cs {
				if c != nil {
					c.Release()
				}
			}
		}
	}()
	idxBuf := memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(perm))
	idx := array.NewInt32Data(array.NewData(arrow.PrimitiveTypes.Int32, n, []*memory.Buffer{nil, idxBuf}, nil, 0, 0))
	defer idx.Release()
	ctx := compute.WithAllocator(context.Background(), mem)
	for c := range schema.NumFields() {
		taken, err := takeColumn(ctx, recs, c, idx, mem)
		if err != nil {
			return nil, fmt.Errorf("cluster: gather column %q: %w", schema.Field(c).Name, err)
		}
		for b := range nb {
			lo, hi := b*batchRows, min(n, (b+1)*batchRows)
			cols[b][c] = array.NewSlice(taken, int64(lo), int64(hi))
		}
		taken.Release()
	}
	out := make([]arrow.RecordBatch, nb)
	for b := range nb {
		lo, hi := b*batchRows, min(n, (b+1)*batchRows)
		out[b] = array.NewRecordBatch(schema, cols[b], int64(hi-lo))
	}
	return out, nil
}

func takeColumn(ctx context.Context, recs []arrow.RecordBatch, c int, idx arrow.Array, mem memory.Allocator) (arrow.Array, error) {
	var values arrow.Array
	if len(recs) == 1 {
		values = recs[0].Column(c)
		values.Retain()
	} else {
		chunks := make([]arrow.Array, len(recs))
		for i, r := range recs {
			chunks[i] = r.Column(c)
		}
		var err error
		if values, err = array.Concatenate(chunks, mem); err != nil {
			return nil, err
		}
	}
	defer values.Release()
	return compute.TakeArray(ctx, values, idx)
}
