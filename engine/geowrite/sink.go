package geowrite

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
)

// Sink writes a stream of record batches, in order, as data files of
// FileRows(0), FileRows(1), ... rows: it cuts batches at file boundaries
// and streams each file's rows to its own Records call (GeoParquet
// metadata included), so a file is never gathered in memory whole. Up to
// Lanes files are written at once;
// each file's queue holds at most Queue batches, which bounds what the
// sink holds to about Lanes × Queue batches whatever the file size.
type Sink struct {
	ctx      context.Context
	cancel   context.CancelCauseFunc
	tbl      *table.Table
	sc       *arrow.Schema
	opts     []table.WriteRecordOption
	fileRows func(int) int64
	lanes    chan struct{}
	queue    int
	writeID  func() uuid.UUID

	cur  chan arrow.RecordBatch
	file int   // index of the file being filled
	have int64 // rows sent to it

	wg    sync.WaitGroup
	mu    sync.Mutex
	files map[int][]iceberg.DataFile
	err   error
}

// SinkConfig is how a Sink cuts and writes its files.
type SinkConfig struct {
	// Options are passed to every file's Records call; the sink adds a
	// target file size that never rolls to a second file.
	Options []table.WriteRecordOption
	// FileRows returns the row count of file i (from 0).
	FileRows func(i int) int64
	// Lanes is how many files are written at once (at least 1).
	Lanes int
	// Queue is how many batches each file being written may have queued
	// (at least 1).
	Queue int
	// WriteID, when set, names each file's WriteRecords call (a fresh
	// UUID per call, or the writer's counters would repeat names).
	WriteID func() uuid.UUID
}

// NewSink returns a sink writing into tbl with writer schema sc. Write
// the batches, then Close it once, also after an error.
func NewSink(ctx context.Context, tbl *table.Table, sc *arrow.Schema, cfg SinkConfig) *Sink {
	ctx, cancel := context.WithCancelCause(ctx)
	return &Sink{
		ctx: ctx, cancel: cancel, tbl: tbl, sc: sc,
		// One call per file: it never rolls to a second file.
		opts:     append(cfg.Options, table.WithTargetFileSize(math.MaxInt64)),
		fileRows: cfg.FileRows,
		lanes:    make(chan struct{}, max(1, cfg.Lanes)),
		queue:    max(1, cfg.Queue),
		files:    map[int][]iceberg.DataFile{},
		writeID:  cfg.WriteID,
	}
}

// Write sends the rows of rec to the files they belong to. It takes
// ownership of rec (releases it).
func (s *Sink) Write(rec arrow.RecordBatch) error {
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
func (s *Sink) open() error {
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
		for df, err := range Records(s.ctx, s.tbl, s.sc, iter.Seq2[arrow.RecordBatch, error](rows), opts...) {
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

func (s *Sink) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = err
		s.cancel(err)
	}
}

func (s *Sink) failure() error {
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
func (s *Sink) Close() ([]iceberg.DataFile, error) {
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
