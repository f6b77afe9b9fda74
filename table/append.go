package table

import (
	"context"
	"errors"
	"log/slog"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/geocompact/geocompact/internal/remedy"
	"github.com/geocompact/geocompact/spatial"
)

// An Appender is a table that files are appended to in one commit, as its
// format keeps it: how it says which files it holds already, how it is
// made from the first file, and how the written files are gated and
// committed, with a retry, so that none is appended twice. ingest runs the
// steps every format shares (validating, conforming, skipping what was
// ingested) over an Appender; each format implements one. An Appender
// serves one ingest: Load, then Append once.
type Appender interface {
	// Name names the table in messages: NS.T, or its location.
	Name() string
	// CheckAppend refuses, naming it, what the format cannot do of spec,
	// before any file is read. Its errors are a mistake in the request.
	CheckAppend(spec AppendSpec) error
	// Load reads the table as it is now. With spec.Create set and no
	// table there it reports Exists false; without it a missing table is
	// an error matching ErrNoTable. An existing table partitioned other
	// than spec asks is refused (ErrPartitioning), and one the format may
	// not write is refused too.
	Load(ctx context.Context, spec AppendSpec) (Loaded, error)
	// Ingested returns the sources whose content the loaded table holds.
	Ingested(srcs []Source) []Skipped
	// Columns is the loaded table's geometry, which the files must match.
	Columns(geometryColumn string) (spatial.Columns, error)
	// Schema is the loaded table's schema, which the files are conformed
	// to.
	Schema() (*arrow.Schema, error)
	// Append makes the table when Load found none, writes req's sources as
	// its data files and commits them in one commit, retrying a lost race
	// on the table's new state. Sources another writer appended meanwhile
	// are left out and listed in Appended.Skipped (unless duplicates are
	// allowed). Whenever Append fails, the files it wrote are deleted
	// unless the commit's outcome is unknown. A table created by another
	// writer between Load and Append returns ErrCreatedMeanwhile, having
	// written nothing: the caller loads it and checks the files again.
	Append(ctx context.Context, req AppendRequest) (*Appended, error)
}

// AppendSpec is what an append asks of its table beyond the rows.
type AppendSpec struct {
	// Create makes the table from the first file when there is none.
	Create bool
	// FormatVersion of a created table (0: the format's default).
	FormatVersion int
	// PartitionBy is the partitioning asked for, as written, and
	// Partitions its terms (ParsePartitioning); "" and nil for none.
	PartitionBy string
	Partitions  []PartitionTerm
	// AddColumns adds the files' columns the table lacks to its schema.
	AddColumns bool
	// Log receives a line per phase; nil discards.
	Log *slog.Logger
}

// Logger is s.Log, or a logger that discards.
func (s AppendSpec) Logger() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}

// Loaded is what Load found.
type Loaded struct {
	// Exists is false for a table still to be made.
	Exists bool
	// Commit is the table's latest commit: its snapshot id or version
	// (0 or -1 when there is none, as the format counts).
	Commit int64
}

// Source is one file to append, with the sha256 of its bytes.
type Source struct {
	Path, Digest string
}

// Skipped is a source left out because its content was appended already:
// by the commit Commit, recorded under the name Previous, or (Commit nil)
// earlier in the same batch as Previous.
type Skipped struct {
	Source
	Previous string
	Commit   *int64
}

// Unskipped returns srcs without the sources found skipped (by digest),
// in a new slice.
func Unskipped(srcs []Source, found []Skipped) []Source {
	return slices.DeleteFunc(slices.Clone(srcs), func(s Source) bool {
		return slices.ContainsFunc(found, func(f Skipped) bool { return f.Digest == s.Digest })
	})
}

// AppendRequest is the rows an Append writes and how.
type AppendRequest struct {
	// Sources are the files to append, in order.
	Sources []Source
	// Rows streams a source's rows conformed to schema, releasing each
	// batch when fn returns. A source that does not fit fails it.
	Rows func(ctx context.Context, src Source, schema *arrow.Schema, fn func(arrow.RecordBatch) error) error
	// Schema is what the rows are conformed to: Schema's, or for a table
	// still to be made, the first file's columns with the geometry as WKB.
	Schema *arrow.Schema
	// Columns is the geometry the files were validated against.
	Columns spatial.Columns
	// AddColumns are columns to add to the table's schema first, as
	// optional columns, when the spec asked for it.
	AddColumns []arrow.Field
	// AllowDuplicates appends sources another writer appended meanwhile.
	AllowDuplicates bool
	// CommitRetries is the budget of retried commits (0: the format's
	// default, negative: none).
	CommitRetries int
}

// Appended is what an Append committed.
type Appended struct {
	// Created: the table was made by this append.
	Created bool
	// Committed: a commit landed, Commit (a snapshot id or version);
	// when every source was appended meanwhile by another writer, Commit
	// is the table's latest.
	Committed bool
	Commit    int64
	// Files and Rows count the sources appended and their rows;
	// DataFiles the data files written for them.
	Files, DataFiles int
	Rows             int64
	// AddedColumns names the columns added to the table's schema.
	AddedColumns []string
	// Skipped are sources another writer appended meanwhile.
	Skipped []Skipped
}

// Reasons an append is refused (errors.Is matches them). The first three
// are their remedy (package remedy), which a front end words as its own
// flags.
var (
	// ErrNoTable: the table does not exist and AppendSpec.Create is off.
	ErrNoTable error = &remedy.Error{Advice: remedy.Advice{Kind: RemedyCreate}}
	// ErrPartitioning: the spec's partitioning differs from the table's.
	ErrPartitioning error = &remedy.Error{Advice: remedy.Advice{Kind: RemedyTablePartitioning}}
	// ErrNoAddColumns: a format that cannot add columns was asked to.
	ErrNoAddColumns error = &remedy.Error{Advice: remedy.Advice{Kind: RemedyLeaveColumnsOut}}
	// ErrPartitionSpec: a partitioning the format cannot use.
	ErrPartitionSpec = errors.New("bad partition spec")
	// ErrCreatedMeanwhile: another writer made the table after Load.
	ErrCreatedMeanwhile = errors.New("table created concurrently")
)

// What a user can do about the errors above, in the library's words.
var (
	// RemedyCreate: create the table from the files.
	RemedyCreate = remedy.Define("table.create", func(remedy.Advice) string { return "create it from the files" })
	// RemedyTablePartitioning: append with the table's partitioning.
	RemedyTablePartitioning = remedy.Define("table.table-partitioning", func(remedy.Advice) string {
		return "drop the requested partitioning"
	})
	// RemedyLeaveColumnsOut: leave the columns the table lacks out.
	RemedyLeaveColumnsOut = remedy.Define("table.leave-columns-out", func(remedy.Advice) string {
		return "leave the extra columns out"
	})
)
