package cuts

import (
	"context"
	"fmt"
	"iter"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
)

// Sink writes a stream of record batches, in order, as files of
// FileRows(0), FileRows(1), ... rows: it cuts batches at file boundaries
// and streams each file's rows to its own Write call, so a file is never
// gathered in memory whole. Up to Lanes files are written at once; each
// file's queue holds at most Queue batches, which bounds what the sink
// holds to about Lanes × Queue batches whatever the file size. T is what
// the table format says of a file it wrote.
type Sink[T any] struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	cfg    SinkConfig[T]
	lanes  chan struct{}

	cur  chan arrow.RecordBatch
	file int   // index of the file being filled
	have int64 // rows sent to it

	wg    sync.WaitGroup
	mu    sync.Mutex
	files map[int][]T
	err   error
}

// SinkConfig is how a Sink cuts and writes its files.
type SinkConfig[T any] struct {
	// FileRows returns the row count of file i (from 0).
	FileRows func(i int) int64
	// Lanes is how many files are written at once (at least 1).
	Lanes int
	// Queue is how many batches each file being written may have queued
	// (at least 1).
	Queue int
	// Write writes file i from rows, which it owns (it releases each
	// batch). After an error it still returns what it wrote, so that it
	// can be deleted.
	Write func(ctx context.Context, i int, rows iter.Seq2[arrow.RecordBatch, error]) ([]T, error)
}

// NewSink returns a sink writing files with cfg.Write. Write the
// batches, then Close it once, also after an error.
func NewSink[T any](ctx context.Context, cfg SinkConfig[T]) *Sink[T] {
	ctx, cancel := context.WithCancelCause(ctx)
	cfg.Queue = max(1, cfg.Queue)
	return &Sink[T]{ctx: ctx, cancel: cancel, cfg: cfg, lanes: make(chan struct{}, max(1, cfg.Lanes)), files: map[int][]T{}}
}

// Write sends the rows of rec to the files they belong to. It takes
// ownership of rec (releases it).
func (s *Sink[T]) Write(rec arrow.RecordBatch) error {
	defer rec.Release()
	for off := int64(0); off < rec.NumRows(); {
		if s.cur == nil {
			if err := s.open(); err != nil {
				return err
			}
		}
		take := min(s.cfg.FileRows(s.file)-s.have, rec.NumRows()-off)
		part := rec.NewSlice(off, off+take)
		select {
		case s.cur <- part:
		case <-s.ctx.Done():
			part.Release()
			return s.failure()
		}
		off += take
		if s.have += take; s.have >= s.cfg.FileRows(s.file) {
			close(s.cur)
			s.cur, s.have = nil, 0
			s.file++
		}
	}
	return nil
}

// open starts the next file once a lane is free.
func (s *Sink[T]) open() error {
	select {
	case s.lanes <- struct{}{}:
	case <-s.ctx.Done():
		return s.failure()
	}
	ch := make(chan arrow.RecordBatch, s.cfg.Queue)
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
		files, err := s.cfg.Write(s.ctx, idx, rows)
		s.mu.Lock()
		s.files[idx] = files
		s.mu.Unlock()
		if err != nil {
			s.fail(fmt.Errorf("file %d: %w", idx+1, err))
		}
		for rec := range ch { // a failed file drains its queue so Write never blocks
			rec.Release()
		}
	})
	return nil
}

func (s *Sink[T]) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = err
		s.cancel(err)
	}
}

func (s *Sink[T]) failure() error {
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
func (s *Sink[T]) Close() ([]T, error) {
	if s.cur != nil {
		close(s.cur)
		s.cur = nil
	}
	s.wg.Wait()
	s.cancel(nil)
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []T
	for i := 0; i <= s.file; i++ {
		out = append(out, s.files[i]...)
	}
	return out, s.err
}
