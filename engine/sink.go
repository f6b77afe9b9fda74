package engine

import (
	"context"
	"fmt"
	"iter"
	"math"
	"slices"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/geocompact/geocompact/engine/geowrite"
)

// fileSink writes a stream of record batches, in order, as data files of
// fileRows(0), fileRows(1), ... rows: it cuts batches at file boundaries
// and streams each file's rows to its own geowrite.Records call (GeoParquet
// metadata included), so a file is never gathered in memory whole. Up to
// lanes files are written at once;
// each file's queue holds at most queue batches, which bounds what the
// sink holds to about lanes × queue batches whatever the file size.
type fileSink struct {
	ctx      context.Context
	cancel   context.CancelCauseFunc
	tbl      *table.Table
	sc       *arrow.Schema
	opts     []table.WriteRecordOption
	fileRows func(int) int64
	lanes    chan struct{}
	queue    int
	// writeID, when set, names each file's WriteRecords call (a fresh
	// UUID per call, or the writer's counters would repeat names).
	writeID func() uuid.UUID

	cur  chan arrow.RecordBatch
	file int   // index of the file being filled
	have int64 // rows sent to it

	wg    sync.WaitGroup
	mu    sync.Mutex
	files map[int][]iceberg.DataFile
	err   error
}

// newSink returns a sink writing into ex's table with writer schema sc.
func (ex *execution) newSink(ctx context.Context, sc *arrow.Schema, opts []table.WriteRecordOption, fileRows func(int) int64, queue int) *fileSink {
	ctx, cancel := context.WithCancelCause(ctx)
	return &fileSink{
		ctx: ctx, cancel: cancel, tbl: ex.tbl, sc: sc,
		// One call per file: it never rolls to a second file.
		opts:     append(opts, table.WithTargetFileSize(math.MaxInt64)),
		fileRows: fileRows,
		lanes:    make(chan struct{}, max(1, ex.lanes)),
		queue:    max(1, queue),
		files:    map[int][]iceberg.DataFile{},
		writeID:  ex.writeID,
	}
}

// Write sends the rows of rec to the files they belong to. It takes
// ownership of rec (releases it).
func (s *fileSink) Write(rec arrow.RecordBatch) error {
	defer rec.Release()
	for off := int64(0); off < rec.NumRows(); {
		if s.cur == nil {
			if err := s.open(); err != nil {
				return err
			}
		}
		take := min(s.fileRows(s.file)-s.have, rec.NumRows()-off)
		part := rec.NewSlice(off, off+take)
		select {
		case s.cur <- part:
		case <-s.ctx.Done():
			part.Release()
			return s.failure()
		}
		off += take
		if s.have += take; s.have >= s.fileRows(s.file) {
			close(s.cur)
			s.cur, s.have = nil, 0
			s.file++
		}
	}
	return nil
}

// open starts the next file once a lane is free.
func (s *fileSink) open() error {
	select {
	case s.lanes <- struct{}{}:
	case <-s.ctx.Done():
		return s.failure()
	}
	ch := make(chan arrow.RecordBatch, s.queue)
	s.cur = ch
	idx := s.file
	s.wg.Go(func() {
		defer func() { <-s.lanes }()
		rows := func(yield func(arrow.RecordBatch, error) bool) {
			for rec := range ch {
				if !yield(rec, nil) {
					return
				}
			}
		}
		opts := s.opts
		if s.writeID != nil {
			opts = append(slices.Clone(opts), table.WithWriteUUID(s.writeID()))
		}
		for df, err := range geowrite.Records(s.ctx, s.tbl, s.sc, iter.Seq2[arrow.RecordBatch, error](rows), opts...) {
			if err != nil {
				s.fail(fmt.Errorf("file %d: %w", idx+1, err))
				break
			}
			s.mu.Lock()
			s.files[idx] = append(s.files[idx], df)
			s.mu.Unlock()
		}
		for rec := range ch { // a failed file drains its queue so Write never blocks
			rec.Release()
		}
	})
	return nil
}

func (s *fileSink) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = err
		s.cancel(err)
	}
}

func (s *fileSink) failure() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	return context.Cause(s.ctx)
}

// Close finishes the last file, waits for every file and returns them in
// order. After an error it still returns the files that were written, so
// the caller can delete them.
func (s *fileSink) Close() ([]iceberg.DataFile, error) {
	if s.cur != nil {
		close(s.cur)
		s.cur = nil
	}
	s.wg.Wait()
	s.cancel(nil)
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []iceberg.DataFile
	for i := 0; i <= s.file; i++ {
		out = append(out, s.files[i]...)
	}
	return out, s.err
}
