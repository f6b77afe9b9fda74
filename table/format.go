// Package table is the seam between the rewrite engine and a table
// format: the files a plan is made of (PlanFile), what the engine asks of
// a format (Format: read, write, read back, commit, remove) and what it
// hands over (Sink, OutFile, Replacement). It is a leaf: the engine and
// the formats (table/icebergtable, table/deltatable) import it.
package table

import (
	"context"
	"errors"
	"iter"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/google/uuid"

	"github.com/geocompact/geocompact/spatial"
)

// readLanesKey keys the files a read decodes at once (WithReadLanes).
type readLanesKey struct{}

// WithReadLanes returns ctx asking Format.Read to decode at most n files
// at once (a format that decodes one at a time ignores it): a group read
// in several parts at once keeps its read-ahead to one read's.
func WithReadLanes(ctx context.Context, n int) context.Context {
	return context.WithValue(ctx, readLanesKey{}, n)
}

// ReadLanes is how many files a read of ctx decodes at once, or 0 when
// not asked (the format's default).
func ReadLanes(ctx context.Context) int {
	n, _ := ctx.Value(readLanesKey{}).(int)
	return max(n, 0)
}

// PlanFile is what the planner needs to know of one data file.
type PlanFile struct {
	Path      string `json:"path"`
	Size      int64  `json:"size_bytes"`
	Records   int64  `json:"records"`
	Partition string `json:"partition"`
	// DeleteFiles is the number of delete files that apply to the file.
	DeleteFiles int `json:"delete_files"`
	// Bound is the file's box from its statistics, when HasBound; the
	// planner's overlap-aware selection uses it.
	Bound    spatial.Bound `json:"-"`
	HasBound bool          `json:"-"`

	// File is the format's own description of the file (an Iceberg scan
	// task, a Delta add action).
	File any `json:"-"`
}

// Format is what the rewrite core asks of a table format, at the version
// a rewrite planned on: read a group's live rows, write its files, read
// them back, commit a replace and delete what did not commit.
// table/icebergtable implements it for Iceberg tables and
// table/deltatable for Delta tables; the engine's execution of a plan
// never asks which format it runs on.
type Format interface {
	// Read streams the live rows of files, some or all of group's
	// (deletes applied): every column when cols is nil, else those
	// named. It returns the schema the rows are read with.
	Read(ctx context.Context, group, files []PlanFile, cols []string) (*arrow.Schema, iter.Seq2[arrow.RecordBatch, error], error)
	// WriteSchema is the schema the rows of the group of files, read
	// with sc, are written with (a format may add columns it carries,
	// such as Iceberg's row lineage).
	WriteSchema(group []PlanFile, sc *arrow.Schema) (*arrow.Schema, error)
	// NewSink starts writing the rows of the group of files.
	NewSink(ctx context.Context, group []PlanFile, sc *arrow.Schema, cfg SinkConfig) Sink
	// ReadBack streams the rows of files written for group.
	ReadBack(ctx context.Context, group []PlanFile, written []OutFile) (iter.Seq2[arrow.RecordBatch, error], error)
	// Commit replaces each group's files with the files written for it,
	// in one commit, and returns the commit's id (a snapshot id, a
	// table version) and how many delete files (or deletion vectors)
	// went with the files they applied to. It fails with
	// catalogs.ErrConflict, committing nothing,
	// when a replaced file changed under the rewrite; a concurrent
	// append is not a conflict.
	Commit(ctx context.Context, groups []Replacement, c Commit) (id int64, removedDeletes int, err error)
	// Remove deletes files a rewrite wrote and did not commit.
	Remove(ctx context.Context, paths []string) error
	// BrokenInput adds to err, a failure reading files, which of them is
	// not readable, when err does not say.
	BrokenInput(ctx context.Context, files []PlanFile, err error) error
	// Spatial returns the table's spatial columns (an error for a table
	// without any) and its properties, for validating geometry.
	Spatial() (spatial.Columns, map[string]string, error)
}

// Replacement is one group's part of a rewrite's commit.
type Replacement struct {
	// Files are the files the group replaces; New the files it wrote.
	Files []PlanFile
	New   []OutFile
	// Read is the rows the group read from Files, deletes applied: the
	// commit gate checks that New holds exactly as many.
	Read int64
}

// SinkConfig is how a group's rows are cut into files and written.
type SinkConfig struct {
	// FileRows(i) is the row count of the i-th file.
	FileRows func(int) int64
	// Lanes files are written at once, each with Queue batches queued.
	Lanes, Queue int
	// WriteID, when set, names each file written.
	WriteID func() uuid.UUID
	// SameBytes makes a file's bytes depend on its rows alone, not on
	// the batches they arrive in (a sorted group's rows arrive batched one
	// way in a local rewrite and another through a distributed job's
	// buckets), at the cost of copying rows where batches break. Formats
	// whose writer encodes the same rows alike however batched ignore it.
	SameBytes bool
	// RowGroupRows, when positive, is the most rows a row group of a file
	// holds (see engine's rowGroupRows), unless the table sets its own
	// limit; 0 writes row groups as the table says.
	RowGroupRows int64
}

// Sink writes a group's rows as files.
type Sink interface {
	// Write takes ownership of rec.
	Write(rec arrow.RecordBatch) error
	// Close finishes the files; after an error it still returns the
	// files written, so that they can be deleted.
	Close() ([]OutFile, error)
}

// OutFile is one file a rewrite wrote.
type OutFile struct {
	Path    string
	Size    int64
	Records int64
	// File is the format's own description of it (an iceberg.DataFile,
	// a Delta add action).
	File any
}

// notCommitted is an error of a commit that surely left the table
// unchanged; its message is the error's own.
type notCommitted struct{ error }

func (e notCommitted) Unwrap() error { return e.error }

// NotCommitted marks err, a failure of Format.Commit, as one that surely
// left the table unchanged: the commit lost to another writer, found its
// base changed, or failed writing a file before the table could take it.
// A format returns any other failure (a timeout after the commit was
// sent, a catalog's server error) unmarked: its outcome is unknown.
func NotCommitted(err error) error {
	if err == nil || IsNotCommitted(err) {
		return err
	}
	return notCommitted{err}
}

// IsNotCommitted reports whether err was marked by NotCommitted: the
// files the commit would have added may be deleted.
func IsNotCommitted(err error) bool {
	var nc notCommitted
	return errors.As(err, &nc)
}
