package engine

import (
	"context"
	"iter"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/google/uuid"

	"github.com/geocompact/geocompact/spatial"
)

// tableFormat is what the rewrite core asks of a table format, at the
// version a rewrite planned on: read a group's live rows, write its
// files, read them back, commit a replace and delete what did not
// commit. An Iceberg table (icebergFormat) and a Delta table
// (deltaFormat) implement it; the execution of a plan never asks which.
type tableFormat interface {
	// read streams the live rows of files, some or all of a group's
	// (deletes applied): every column when cols is nil, else those
	// named. It returns the schema the rows are read with.
	read(ctx context.Context, group, files []PlanFile, cols []string) (*arrow.Schema, iter.Seq2[arrow.RecordBatch, error], error)
	// writeSchema is the schema the rows of files, read with sc, are
	// written with (the format may add columns it carries, such as row
	// lineage).
	writeSchema(files []PlanFile, sc *arrow.Schema) (*arrow.Schema, error)
	// newSink starts writing the rows of the group of files.
	newSink(ctx context.Context, files []PlanFile, sc *arrow.Schema, cfg sinkConfig) groupSink
	// readBack streams the rows of files written for the group of in.
	readBack(ctx context.Context, in []PlanFile, written []outFile) (iter.Seq2[arrow.RecordBatch, error], error)
	// commit replaces the groups' input files with their outputs in one
	// commit, and returns its id (snapshot id or table version) and how
	// many delete files went with the files they applied to. It fails
	// with ErrConflict when a replaced file changed under the rewrite.
	commit(ctx context.Context, r *rewriter, outs []*groupOut) (id int64, removedDeletes int, err error)
	// remove deletes files written by a rewrite that did not commit them.
	remove(ctx context.Context, paths []string) error
	// brokenInput names, in err (a failure reading files), the first of
	// files that is not readable Parquet, when err names none.
	brokenInput(ctx context.Context, files []PlanFile, err error) error
	// spatial returns the table's spatial columns (an error for a table
	// without any) and its properties, for validating geometry.
	spatial() (spatial.Columns, map[string]string, error)
}

// sinkConfig is how a group's rows are cut into files and written.
type sinkConfig struct {
	// fileRows(i) is the row count of the i-th file.
	fileRows func(int) int64
	// lanes files are written at once, each with queue batches queued.
	lanes, queue int
	// writeID, when set, names each file written.
	writeID func() uuid.UUID
}

// groupSink writes a group's rows as files.
type groupSink interface {
	// Write takes ownership of rec.
	Write(rec arrow.RecordBatch) error
	// Close finishes the files; after an error it still returns the
	// files written, so that they can be deleted.
	Close() ([]outFile, error)
}

// outFile is one file a rewrite wrote.
type outFile struct {
	Path    string
	Size    int64
	Records int64
	// file is the format's own description of it (an iceberg.DataFile,
	// a *delta.Add).
	file any
}

// outPaths returns the paths of files.
func outPaths(files []outFile) []string {
	ps := make([]string, len(files))
	for i, f := range files {
		ps[i] = f.Path
	}
	return ps
}
