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
