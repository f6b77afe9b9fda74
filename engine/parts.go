package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/geocompact/geocompact/engine/verify"
	"github.com/geocompact/geocompact/table"
)

// A bin-packed group read as one stream fills one file at a time: the
// writer of the next file waits for its rows, so a group given two lanes
// used about one and a half of them. binpackParts cuts such a group's
// input files into consecutive parts of about equal rows, one per lane,
// and rewriteParts reads and writes the parts at once, each into its
// share of the group's files, each read decoding its share of the files
// the group's read would decode at once (table.WithReadLanes).

// binpackParts returns the input files of group o cut into parts to be
// rewritten at once, or nil when the group is written as one stream: a
// sorted group, a group given one lane or to be written as one file, and
// a group with deletes (the rows of its files are then not known before
// they are read, and a part's share of the files is chosen by its rows).
// The parts are fileParts' runs of consecutive files of about equal
// rows, and each holds at least one row.
func (ex *execution) binpackParts(o *groupOut) [][]table.PlanFile {
	if ex.r.lay.strategy == Sort || ex.lanes < 2 || o.group.OutputFiles < 2 {
		return nil
	}
	var total int64
	for _, f := range o.files {
		if f.DeleteFiles > 0 || f.Records < 0 {
			return nil
		}
		total += f.Records
	}
	n := min(ex.lanes, o.group.OutputFiles, len(o.files))
	if n < 2 || total != o.group.Records {
		return nil
	}
	starts, _ := fileParts(func(i int) int64 { return o.files[i].Records }, total, n)
	parts := make([][]table.PlanFile, len(starts))
	for k, s := range starts {
		end := len(o.files)
		if k+1 < len(starts) {
			end = starts[k+1]
		}
		parts[k] = o.files[s:end]
	}
	for _, p := range parts {
		if len(p) == 0 || records(p) == 0 {
			return nil
		}
	}
	if len(parts) < 2 {
		return nil
	}
	return parts
}

func records(files []table.PlanFile) int64 {
	var n int64
	for _, f := range files {
		n += f.Records
	}
	return n
}

// partFiles shares a group's out files among parts of rows rows each (of
// total), in proportion and every part at least one: the files planned
// before each part's end, rounded, less those before its start. It
// returns nil when a part would get none.
func partFiles(out int, rows []int64) []int {
	var total int64
	for _, r := range rows {
		total += r
	}
	shares := make([]int, len(rows))
	var at int64
	prev := 0
	for k, r := range rows {
		at += r
		end := int((int64(out)*at*2 + total) / (2 * total))
		if k == len(rows)-1 {
			end = out
		}
		if shares[k] = end - prev; shares[k] < 1 {
			return nil
		}
		prev = end
	}
	return shares
}

// rewriteParts reads and writes the parts of group o at once, each into
// its share of the group's files (see partFiles), then verifies them all
// as one group. When a part fails, the others are cancelled; every file
// any part wrote is the group's, to be removed, and the first error that
// is not a cancellation is returned.
func (ex *execution) rewriteParts(ctx context.Context, o *groupOut, parts [][]table.PlanFile) error {
	rows := make([]int64, len(parts))
	for k, p := range parts {
		rows[k] = records(p)
	}
	shares := partFiles(o.group.OutputFiles, rows)
	if shares == nil {
		g, recs, err := ex.readGroup(ctx, o, o.files)
		if err != nil {
			return err
		}
		files, err := ex.writeStream(ctx, g, recs)
		return ex.verifyWritten(ctx, o, g, files, err)
	}
	if h := hooksOf(ctx); h.WriteParts != nil {
		h.WriteParts(len(parts))
	}
	start := time.Now()
	partCtx, cancel := context.WithCancel(table.WithReadLanes(ctx, max(1, ex.lanes/len(parts))))
	defer cancel()
	type result struct {
		g     *groupIO
		files []table.OutFile
		in    verify.Digest
		err   error
	}
	res := make([]result, len(parts))
	var (
		wg    sync.WaitGroup
		first int64
	)
	for k := range parts {
		from := first
		first += rows[k]
		res[k].in = verify.NewDigest()
		wg.Go(func() {
			r := &res[k]
			r.g, r.files, r.err = ex.writePart(partCtx, o, parts[k], rows[k], shares[k], len(parts), from, &r.in)
			if r.err != nil {
				cancel()
			}
		})
	}
	wg.Wait()
	var (
		files    []table.OutFile
		err      error
		canceled error
	)
	for _, r := range res {
		files = append(files, r.files...)
		switch {
		case r.err == nil:
		case errors.Is(r.err, context.Canceled) && ctx.Err() == nil:
			canceled = r.err // another part failed first
		case err == nil:
			err = r.err
		}
		o.in.Merge(r.in)
	}
	if err == nil {
		err = canceled
	}
	ex.r.log.Debug("rewrite group written", "partition", o.group.Partition, "files", len(files), "parts", len(parts), "duration", time.Since(start))
	return ex.verifyWritten(ctx, o, res[0].g, files, err)
}

// writePart reads the rows of files, part of group o (rows rows, of
// parts parts, from row first of the group on), validates them, folds
// them into in and writes them into out files of even rows.
func (ex *execution) writePart(ctx context.Context, o *groupOut, files []table.PlanFile, rows int64, out, parts int, first int64, in *verify.Digest) (*groupIO, []table.OutFile, error) {
	g, recs, err := ex.readGroupInto(ctx, o, files, in, first)
	if err != nil {
		return nil, nil, err
	}
	sink := ex.newSinkLanes(ctx, o, g.sc, evenChunks(rows, out), sinkQueue, max(1, ex.lanes/parts))
	err = eachBatch(recs, g.digest, func(rec arrow.RecordBatch) error {
		if err := sink.Write(rec); err != nil {
			return fmt.Errorf("write: %w", err)
		}
		return nil
	})
	written, err := closeSink(sink, err)
	return g, written, err
}
