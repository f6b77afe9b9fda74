package cluster

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// take gathers the rows of recs in perm's order into batches of at most
// batchRows rows, one batch at a time, so that besides the result it holds
// no more than one batch's indexes.
func take(recs []arrow.RecordBatch, perm []int32, batchRows int, schema *arrow.Schema, mem memory.Allocator) ([]arrow.RecordBatch, error) {
	var out []arrow.RecordBatch
	for lo := 0; lo < len(perm); lo += batchRows {
		rec, err := Gather(schema, recs, perm[lo:min(len(perm), lo+batchRows)], mem)
		if err != nil {
			for _, r := range out {
				r.Release()
			}
			return nil, err
		}
		out = append(out, rec)
	}
	return out, nil
}
