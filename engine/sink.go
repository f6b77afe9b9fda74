package engine

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
)

// newSink returns a sink writing the rows of group o's files with writer
// schema sc into files of fileRows(0), fileRows(1), ... rows.
func (ex *execution) newSink(ctx context.Context, o *groupOut, sc *arrow.Schema, fileRows func(int) int64, queue int) groupSink {
	return ex.tf.newSink(ctx, o.files, sc, sinkConfig{fileRows: fileRows, lanes: ex.lanes, queue: queue, writeID: ex.writeID})
}
