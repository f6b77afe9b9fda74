package engine

import (
	"context"
	"fmt"

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
	return ex.tf.NewSink(ctx, o.files, sc, table.SinkConfig{FileRows: fileRows, Lanes: ex.lanes, Queue: queue, WriteID: ex.writeID,
		// A sorted group's files are written from buckets in a job and
		// from one sort or merge locally: the same files either way.
		SameBytes: ex.r.lay.strategy == Sort})
}
