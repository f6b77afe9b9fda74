package engine

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/geocompact/geocompact/table"
)

// newSink returns a sink writing the rows of group o's files with writer
// schema sc into files of fileRows(0), fileRows(1), ... rows.
func (ex *execution) newSink(ctx context.Context, o *groupOut, sc *arrow.Schema, fileRows func(int) int64, queue int) table.Sink {
	return ex.tf.NewSink(ctx, o.files, sc, table.SinkConfig{FileRows: fileRows, Lanes: ex.lanes, Queue: queue, WriteID: ex.writeID})
}
