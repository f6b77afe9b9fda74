package engine

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go/table"

	"github.com/geocompact/geocompact/engine/geowrite"
)

// fileSink is the writer both sorts and binpack stream a group's rows
// into, one file at a time per lane (see geowrite.Sink).
type fileSink = geowrite.Sink

// newSink returns a sink writing into ex's table with writer schema sc.
func (ex *execution) newSink(ctx context.Context, sc *arrow.Schema, opts []table.WriteRecordOption, fileRows func(int) int64, queue int) *fileSink {
	return geowrite.NewSink(ctx, ex.tbl, sc, geowrite.SinkConfig{Options: opts, FileRows: fileRows, Lanes: ex.lanes, Queue: queue, WriteID: ex.writeID})
}
