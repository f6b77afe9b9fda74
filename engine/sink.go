package engine

import (
	"context"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/geocompact/geocompact/table"
)

// closeSink closes sink once the rows are written (err is how writing them
// ended) and returns its files and err, else the close's error as a write
// failure.
func closeSink(sink table.Sink, err error) ([]table.OutFile, error) {
	files, cerr := sink.Close()
	if err == nil && cerr != nil {
		err = fmt.Errorf("write: %w", cerr)
	}
	return files, err
}

// closeSinks closes each of sinks as closeSink does, and returns the files
// of all of them in order and the first error.
func closeSinks(sinks []table.Sink, err error) ([]table.OutFile, error) {
	var files []table.OutFile
	for _, sink := range sinks {
		var written []table.OutFile
		written, err = closeSink(sink, err)
		files = append(files, written...)
	}
	return files, err
}

// partSinks returns a sink for each part of a sorted group's files that
// are written at once (see fileParts): part k's files are the group's
// from file first[k] on, with the group's lanes shared among the parts.
func (ex *execution) partSinks(ctx context.Context, g *groupIO, fileRows func(int) int64, first []int) []table.Sink {
	if h := hooksOf(ctx); h.WriteParts != nil {
		h.WriteParts(len(first))
	}
	sinks := make([]table.Sink, len(first))
	for k, f := range first {
		sinks[k] = ex.newSinkLanes(ctx, g.o, g.sc, func(i int) int64 { return fileRows(f + i) }, sinkQueue, max(1, ex.lanes/len(first)))
	}
	return sinks
}

// fileParts cuts the files of a group of rows rows, file i holding
// fileRows(i) of them (the last the rest), into up to parts runs of
// consecutive files of about equal rows, to be written at once: the
// first file of each part, and the rank of the row each part after the
// first starts at. Each part ends where one of its files ends, so the
// files written are those one stream of the rows writes, row for row.
func fileParts(fileRows func(int) int64, rows int64, parts int) (first []int, cuts []int64) {
	ends := []int64{0}
	for i := 0; ends[i] < rows; i++ {
		ends = append(ends, min(rows, ends[i]+max(fileRows(i), 1)))
	}
	files := len(ends) - 1
	parts = max(1, min(parts, files))
	first = []int{0}
	for k := 1; k < parts; k++ {
		want := rows * int64(k) / int64(parts)
		lo, hi := first[k-1]+1, files-(parts-k)
		j := lo
		for j < hi && ends[j+1] <= want {
			j++
		}
		if j < hi && want-ends[j] > ends[j+1]-want {
			j++
		}
		first = append(first, j)
		cuts = append(cuts, ends[j])
	}
	return first, cuts
}

// newSink returns a sink writing the rows of group o's files with writer
// schema sc into files of fileRows(0), fileRows(1), ... rows.
func (ex *execution) newSink(ctx context.Context, o *groupOut, sc *arrow.Schema, fileRows func(int) int64, queue int) table.Sink {
	return ex.newSinkLanes(ctx, o, sc, fileRows, queue, ex.lanes)
}

// newSinkLanes is newSink writing up to lanes files at once.
func (ex *execution) newSinkLanes(ctx context.Context, o *groupOut, sc *arrow.Schema, fileRows func(int) int64, queue, lanes int) table.Sink {
	return ex.tf.NewSink(ctx, o.files, sc, table.SinkConfig{FileRows: fileRows, Lanes: lanes, Queue: queue, WriteID: ex.writeID,
		// A sorted group's files are written from buckets in a job and
		// from one sort or merge locally: the same files either way.
		SameBytes: ex.r.lay.strategy == Sort, RowGroupRows: ex.r.rowGroupRows(o.group)})
}

// Row groups of a sorted group's files (see rowGroupRows).
const (
	rowGroupsPerFile = 16
	maxRowGroupRows  = 1 << 20
)

// minRowGroupBytes is about the fewest bytes a row group holds (a
// variable for tests).
var minRowGroupBytes int64 = 4 << 20

// rowGroupRows is the most rows a row group of sorted group g's files
// holds: about a sixteenth of a file, so that each row group holds one
// stretch of the order and its statistics a tight box that readers
// (DuckDB, Spark, Trino) skip row groups by, yet no fewer rows than make
// about minRowGroupBytes at the group's bytes per row (small row groups
// cost compression and footer entries), nor more than Iceberg's default
// limit. A file smaller than that is one row group, as before. It is 0
// for a bin-packed group, whose files are written as the table says.
func (r *rewriter) rowGroupRows(g *Group) int64 {
	if r.lay.strategy != Sort || g.Records <= 0 || g.OutputFiles <= 0 {
		return 0
	}
	perFile := (g.Records + int64(g.OutputFiles) - 1) / int64(g.OutputFiles)
	rows := (perFile + rowGroupsPerFile - 1) / rowGroupsPerFile
	if g.Bytes > 0 {
		rows = max(rows, int64(math.Ceil(float64(minRowGroupBytes)*float64(g.Records)/float64(g.Bytes))))
	}
	return min(rows, maxRowGroupRows)
}
