package geowrite

import (
	"context"
	"fmt"
	"iter"
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/geocompact/geocompact/engine/cuts"
)

// Sink writes a stream of record batches, in order, as Iceberg data
// files of FileRows(0), FileRows(1), ... rows, several at once (see
// cuts.Sink), each file's rows streamed to its own Records call
// (GeoParquet metadata included).
type Sink = cuts.Sink[iceberg.DataFile]

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
	// SameBytes hands the writer pieces of exactly pieceRows rows from
	// each file's first row, whatever the batches the rows arrive in (a
	// piece that spans batches is copied): the writer's dictionary
	// decisions, and so the file's bytes, then depend on the rows alone.
	SameBytes bool
}

// pieceRows is the most rows a file's writer is handed at once. The
// Parquet writer decides whether a column's dictionary pays for itself
// only between the batches it is handed (and every
// write.parquet.page-row-limit rows, 20,000 by default, within one), and
// until it decides it hashes every value into the dictionary. A sorted
// rewrite hands it a file's rows as one gathered batch, so every value of
// a column of distinct values (coordinates, ids, times) was hashed before
// the dictionary was found useless and dropped: at 1 MiB files, most of
// the time a sorted rewrite spent writing beyond what binpack, whose
// input batches are a few thousand rows, spent. Pieces of a few thousand
// rows let the writer decide as early for either.
const pieceRows = 4096

// pieces yields the batches of rows cut into zero-copy slices of at most
// n rows; each piece is its receiver's to release, and each batch is
// released once cut.
func pieces(rows iter.Seq2[arrow.RecordBatch, error], n int64) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		for rec, err := range rows {
			if err != nil || rec.NumRows() <= n {
				if !yield(rec, err) {
					return
				}
				continue
			}
			for off := int64(0); off < rec.NumRows(); off += n {
				if !yield(rec.NewSlice(off, min(off+n, rec.NumRows())), nil) {
					rec.Release()
					return
				}
			}
			rec.Release()
		}
	}
}

// alignedPieces yields the rows cut into pieces of exactly n rows
// counted from the first (the last may be shorter), whatever batches they
// arrive in: a piece that spans batches is joined into one batch. Each
// piece is its receiver's to release, and each batch is released once
// cut.
func alignedPieces(rows iter.Seq2[arrow.RecordBatch, error], n int64) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		var held []arrow.RecordBatch
		var have int64
		defer func() { releaseAll(held) }()
		flush := func() bool {
			rec, err := ConcatBatches(held)
			held, have = nil, 0
			return yield(rec, err)
		}
		for rec, err := range rows {
			if err != nil {
				if len(held) == 0 || flush() {
					yield(rec, err)
				}
				return
			}
			for off := int64(0); off < rec.NumRows(); {
				take := min(n-have, rec.NumRows()-off)
				held = append(held, rec.NewSlice(off, off+take))
				have, off = have+take, off+take
				if have == n && !flush() {
					rec.Release()
					return
				}
			}
			rec.Release()
		}
		if len(held) > 0 {
			flush()
		}
	}
}

// ConcatBatches joins recs (of one schema; it releases them) into one
// batch, without copying when there is one.
func ConcatBatches(recs []arrow.RecordBatch) (arrow.RecordBatch, error) {
	defer releaseAll(recs)
	if len(recs) == 1 {
		recs[0].Retain()
		return recs[0], nil
	}
	sc := recs[0].Schema()
	cols := make([]arrow.Array, sc.NumFields())
	defer releaseAll(nil, cols...)
	var rows int64
	for _, r := range recs {
		rows += r.NumRows()
	}
	parts := make([]arrow.Array, len(recs))
	for c := range cols {
		for i, r := range recs {
			parts[i] = r.Column(c)
		}
		a, err := array.Concatenate(parts, memory.DefaultAllocator)
		if err != nil {
			return nil, fmt.Errorf("join batches: %w", err)
		}
		cols[c] = a
	}
	return array.NewRecordBatch(sc, cols, rows), nil
}

// releaseAll releases recs and arrs (nil entries skipped).
func releaseAll(recs []arrow.RecordBatch, arrs ...arrow.Array) {
	for _, r := range recs {
		r.Release()
	}
	for _, a := range arrs {
		if a != nil {
			a.Release()
		}
	}
}

// NewSink returns a sink writing into tbl with writer schema sc. Write
// the batches, then Close it once, also after an error.
func NewSink(ctx context.Context, tbl *table.Table, sc *arrow.Schema, cfg SinkConfig) *Sink {
	// One call per file: it never rolls to a second file. The sink's queue
	// bounds the batches waiting for a file; iceberg-go's writer would
	// queue 64 more of its own per file (at 128 MiB files, most of the
	// rewrite's peak), so it is given room for one.
	opts := append(slices.Clip(cfg.Options), table.WithTargetFileSize(math.MaxInt64), table.WithRecordBatchBufferSize(1))
	write := func(ctx context.Context, _ int, rows iter.Seq2[arrow.RecordBatch, error]) ([]iceberg.DataFile, error) {
		o := opts
		if cfg.WriteID != nil {
			o = append(slices.Clone(opts), table.WithWriteUUID(cfg.WriteID()))
		}
		cut := pieces
		if cfg.SameBytes {
			cut = alignedPieces
		}
		var out []iceberg.DataFile
		for df, err := range Records(ctx, tbl, sc, cut(rows, pieceRows), o...) {
			if err != nil {
				return out, err
			}
			out = append(out, df)
		}
		return out, nil
	}
	return cuts.NewSink(ctx, cuts.SinkConfig[iceberg.DataFile]{FileRows: cfg.FileRows, Lanes: cfg.Lanes, Queue: cfg.Queue, Write: write})
}
