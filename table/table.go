package table

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/geocompact/geocompact/table/layouts"
)

// Table is one table at one version (an Iceberg snapshot, a Delta log
// version), as a rewrite plans and runs on it: what planning needs to
// know of it, and, through Format, how its files are read, written and
// committed. table/icebergtable and table/deltatable open one; the
// engine's Rewrite takes one whatever its format.
type Table struct {
	Format
	// Name names the table in messages (a catalog name, a Delta
	// table's location).
	Name string
	// FormatName is FormatDelta for a Delta table and empty for an
	// Iceberg table: a rewrite's Result.Format.
	FormatName string
	// Version is the snapshot id or log version the table is at.
	Version int64
	// Properties are the table's properties: rewrite options default
	// from them.
	Properties map[string]string
	// Columns are the table's top-level columns; Schema, when known, the
	// Arrow schema its rows are read with.
	Columns []string
	Schema  *arrow.Schema
	// Geometry is the table's geometry column ("" for none).
	Geometry string
	// Layout returns the layout the table records (layouts.Prop, or a
	// format's own sort order); an error when the record does not
	// parse.
	Layout func() (layouts.Record, error)
	// Files are the table's live files at the version, each with the
	// format's own description in PlanFile.File.
	Files []PlanFile
	// Empty, when set, says why the table has nothing to rewrite (no
	// snapshot, no data files).
	Empty string
	// Scope, when set, parses a predicate over the table's rows (see
	// table/where) into the function that selects the files that may hold
	// matching rows, whole files; without it a rewrite scoped by a
	// predicate is refused.
	Scope func(where string) (Scoper, error)
}

// Scoper selects, of files, those that may hold rows a predicate matches.
type Scoper func(ctx context.Context, files []PlanFile) ([]PlanFile, error)

// FormatDelta is Table.FormatName (and a rewrite's Result.Format) for a
// Delta table, whose commits are versions of its log, not snapshots.
const FormatDelta = "delta"

// PropTargetFileSize is the table property that sets the target size of
// the files a rewrite writes (Iceberg's name; a Delta table's
// delta.targetFileSize stands for it when it sets only that).
const PropTargetFileSize = "write.target-file-size-bytes"

// Snapshot summary keys a rewrite records (in a Delta commit's
// commitInfo, the sort order).
const (
	SummaryStrategy  = "geocompact.strategy"
	SummarySortOrder = "geocompact.sort-order"
	SummaryGroups    = "geocompact.file-groups"
	SummaryJobID     = "geocompact.job-id"
	// SummaryPurge is "true" on a purge's commit (Request.PurgeDeletes):
	// a Delta commit records it as Delta's REORG … APPLY (PURGE) does.
	SummaryPurge = "geocompact.purge-deletes"
)

// Commit is what a rewrite's commit records and how it is retried.
type Commit struct {
	// Summary is the snapshot summary (Delta: commit info) to record.
	Summary map[string]string
	// Retries is the budget for commits that lose a race with another
	// writer (0 means the default, negative none).
	Retries int
	// BeforeAttempt, when set, runs before each commit attempt (a test's
	// way to commit concurrently).
	BeforeAttempt func(context.Context)
}

// Use is what a table is opened for. A format refuses to open a table for
// ForWrite when it cannot write it (a protocol or feature it does not
// honour), before anything is read or written; ForRead opens any table
// it can read, so that describing or dry-running a table it could not
// write still works.
type Use int

const (
	// ForRead opens a table to describe or read it.
	ForRead Use = iota
	// ForWrite opens a table that will be written or committed to.
	ForWrite
)

// WriteUnless is ForWrite, or ForRead for a dry run, which writes
// nothing.
func WriteUnless(dryRun bool) Use {
	if dryRun {
		return ForRead
	}
	return ForWrite
}
