package deltatable

import (
	"context"
	"iter"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/geocompact/geocompact/delta"
)

// readAhead is how many files are read at once; readQueue how many
// batches each may have decoded ahead of the consumer. Together they
// bound what a read holds besides the batch being used.
const (
	readAhead = 2
	readQueue = 4
)

// batchOrErr is one step of a file's read.
type batchOrErr struct {
	rec arrow.RecordBatch
	err error
}

// read streams the live rows of adds, in order, columns idx of each batch
// (all when idx is nil) as schema sc. Files are read readAhead at a time,
// each into its own short queue, so that decoding the next file overlaps
// using this one, as Iceberg's scan reads several files at once.
func (f *format) read(ctx context.Context, adds []*delta.Add, sc *arrow.Schema, idx []int) iter.Seq2[arrow.RecordBatch, error] {
	opts := delta.ReadOptions{}
	if idx != nil { // read only the projected columns' data
		for _, fl := range sc.Fields() {
			opts.Columns = append(opts.Columns, fl.Name)
		}
	}
	return func(yield func(arrow.RecordBatch, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		queues := make([]chan batchOrErr, len(adds))
		for i := range queues {
			queues[i] = make(chan batchOrErr, readQueue)
		}
		// A file holds a slot from when its read starts until the consumer
		// has taken its last batch, so at most readAhead files are decoded
		// ahead, however small they are.
		slots := make(chan struct{}, readAhead)
		var wg sync.WaitGroup
		defer func() {
			cancel()
			wg.Wait()
			for _, q := range queues { // what was decoded and not used
				for len(q) > 0 {
					if b := <-q; b.rec != nil {
						b.rec.Release()
					}
				}
			}
		}()
		wg.Go(func() { f.readFiles(ctx, adds, opts, sc, idx, queues, slots, &wg) })
		for _, q := range queues {
			for b := range q {
				if b.err != nil {
					yield(nil, b.err)
					return
				}
				if !yield(b.rec, nil) {
					return
				}
			}
			<-slots
		}
	}
}

// readFiles reads adds into their queues, starting each file when it
// gets one of the slots (the consumer frees them), and closes each queue
// when its file is read (or the read is cancelled).
func (f *format) readFiles(ctx context.Context, adds []*delta.Add, opts delta.ReadOptions, sc *arrow.Schema, idx []int, queues []chan batchOrErr, slots chan struct{}, wg *sync.WaitGroup) {
	for i, a := range adds {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			for _, q := range queues[i:] {
				close(q)
			}
			return
		}
		wg.Go(func() {
			defer close(queues[i])
			err := f.t.ReadFile(ctx, f.snap, a, opts, func(rec arrow.RecordBatch) error {
				out := projectBatch(rec, sc, idx)
				select {
				case queues[i] <- batchOrErr{rec: out}:
					return nil
				case <-ctx.Done():
					out.Release()
					return ctx.Err()
				}
			})
			if err != nil && ctx.Err() == nil {
				select {
				case queues[i] <- batchOrErr{err: err}:
				case <-ctx.Done():
				}
			}
		})
	}
}

// projectBatch is rec's columns idx as schema sc (rec itself, retained,
// for nil idx).
func projectBatch(rec arrow.RecordBatch, sc *arrow.Schema, idx []int) arrow.RecordBatch {
	if idx == nil {
		rec.Retain()
		return rec
	}
	cols := make([]arrow.Array, len(idx))
	for i, c := range idx {
		cols[i] = rec.Column(c)
	}
	return array.NewRecordBatch(sc, cols, rec.NumRows())
}
