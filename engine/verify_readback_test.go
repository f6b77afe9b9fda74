package engine

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"
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
	mu    sync.Mutex
	calls []int
	fail  string // the path whose rows end in an error
}

func (f *readBackFormat) ReadBack(ctx context.Context, _ []table.PlanFile, written []table.OutFile) (iter.Seq2[arrow.RecordBatch, error], error) {
	f.mu.Lock()
	f.calls = append(f.calls, len(written))
	f.mu.Unlock()
	return func(yield func(arrow.RecordBatch, error) bool) {
		for _, w := range written {
			if w.Path == f.fail {
				yield(nil, errors.New("read "+w.Path+": truncated"))
				return
			}
			if err := ctx.Err(); err != nil {
				yield(nil, err)
				return
			}
			b := array.NewInt64Builder(memory.DefaultAllocator)
			for i := range w.Records {
				b.Append(i + int64(len(w.Path))<<32)
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

// TestReadBackOnLanes reads back on several lanes: each scan still reads
// one file, and the digest is the one a single lane gives, whatever the
// lanes and however many files there are.
func TestReadBackOnLanes(t *testing.T) {
	var written []table.OutFile
	for i := range 9 {
		written = append(written, table.OutFile{Path: fmt.Sprintf("%0*d", i+1, 0), Records: int64(3 + i*i)})
	}
	one := verify.NewDigest()
	require.NoError(t, (&execution{tf: &readBackFormat{}}).readBack(t.Context(), nil, written, -1, [4]int{-1, -1, -1, -1}, &one))
	for _, lanes := range []int{2, 3, 16} {
		f := &readBackFormat{}
		d := verify.NewDigest()
		require.NoError(t, (&execution{tf: f, lanes: lanes}).readBack(t.Context(), nil, written, -1, [4]int{-1, -1, -1, -1}, &d))
		assert.Len(t, f.calls, len(written), "lanes %d", lanes)
		for _, c := range f.calls {
			assert.Equal(t, 1, c, "lanes %d: one file a scan", lanes)
		}
		assert.Equal(t, one, d, "lanes %d", lanes)
	}
}

// TestReadBackOnLanesFails: a file that cannot be read back fails the
// verification with its own error on any lane, and leaves the digest as
// it was.
func TestReadBackOnLanesFails(t *testing.T) {
	var written []table.OutFile
	for i := range 6 {
		written = append(written, table.OutFile{Path: fmt.Sprintf("f%d", i), Records: 4})
	}
	for _, lanes := range []int{1, 2, 4} {
		for _, bad := range []string{"f0", "f3", "f5"} {
			d := verify.NewDigest()
			err := (&execution{tf: &readBackFormat{fail: bad}, lanes: lanes}).readBack(t.Context(), nil, written, -1, [4]int{-1, -1, -1, -1}, &d)
			require.Error(t, err, "lanes %d, %s", lanes, bad)
			assert.Contains(t, err.Error(), "read "+bad+": truncated", "lanes %d: the failing file's error, not a cancellation", lanes)
			if lanes > 1 {
				assert.Equal(t, verify.NewDigest(), d, "lanes %d: nothing merged", lanes)
			}
		}
	}
}
