// Package ingest appends validated GeoParquet files to a spatial table in
// one commit: every file is validated first (WKB, CRS against the table's,
// bbox columns, nulls), conformed to the table's schema (with bbox columns
// computed when asked), and only then written and committed. Any refusal
// leaves the table as it was and writes nothing; a table created for a
// first ingest that fails is dropped again.
//
// Run takes the table as a table.Appender, which each format gives
// (icebergtable.Appender, deltatable.Appender). What is the format's own
// (creating the table, its record of the files ingested, the commit and
// its retry) is the Appender's; the rest is here, the same for every
// format.
package ingest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/geocompact/geocompact/internal/remedy"
	format "github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/validate"
)

// ErrConfig marks a Config that cannot be used; nothing was read or
// written. The CLI reports it as a usage error.
var ErrConfig = errors.New("ingest: bad config")

// Reasons an ingest is refused, in library terms; a front end matches
// them (errors.Is) to word them as its own flags.
var (
	// ErrNoTable: the table does not exist and Config.Create is off.
	ErrNoTable = format.ErrNoTable
	// ErrPartitioning: Config.PartitionBy differs from an existing
	// table's partitioning.
	ErrPartitioning = format.ErrPartitioning
	// ErrNoBBox: the files lack the bbox columns and Config.AddBBox is
	// off.
	ErrNoBBox error = &remedy.Error{Advice: remedy.Advice{Kind: RemedyAddBBox}}
	// ErrNoFiles: a directory without Parquet files at its top level.
	ErrNoFiles error = &remedy.Error{Advice: remedy.Advice{Kind: RemedyRecursive}}
	// ErrNoAddColumns: adding columns to a table whose format cannot.
	ErrNoAddColumns = format.ErrNoAddColumns
	// ErrPartitionSpec marks a partition spec that cannot be used.
	ErrPartitionSpec = format.ErrPartitionSpec
)

// What a user can do about the errors above and ExtraColumnsError, in
// the library's words; a front end words them as its flags.
var (
	// RemedyAddBBox: compute the bbox columns from the geometry.
	RemedyAddBBox = remedy.Define("ingest.add-bbox", func(remedy.Advice) string { return "compute the boxes from the geometry" })
	// RemedyRecursive: read the directory's subdirectories too.
	RemedyRecursive = remedy.Define("ingest.recursive", func(remedy.Advice) string { return "read subdirectories too" })
	// RemedyExtraColumns: leave the columns the table lacks out, or add
	// them to the table.
	RemedyExtraColumns = remedy.Define("ingest.extra-columns", func(remedy.Advice) string {
		return "leave them out, or add them to the table as optional columns"
	})
)

// Config is one ingest.
type Config struct {
	// Files are the GeoParquet files to append, all in one commit.
	Files []string
	// Create makes the table from the first file when it does not exist.
	Create bool
	// AddBBox computes missing bbox columns from the WKB.
	AddBBox bool
	// FormatVersion of a created Iceberg table: 2 (WKB plus bbox
	// columns, the default when 0) or 3 (the Iceberg geometry type).
	FormatVersion int
	// PartitionBy is the partitioning of a created table, e.g.
	// "bucket(16, id)" (see ParsePartitionSpec; a Delta table takes
	// column names only).
	PartitionBy string
	// GeometryColumn is the files' geometry column (default: the
	// GeoParquet primary_column).
	GeometryColumn string
	// Checks configures the validation each file must pass.
	Checks validate.Config
	// CommitRetries is the budget for commits that lose a race with another
	// writer (0 means 4, negative none).
	CommitRetries int
	// Logger receives one line per phase; nil discards.
	Logger *slog.Logger
	// Progress, when set, is called after each file is validated.
	Progress func(done, total int)
	// AllowDuplicates ingests files whose content the table's ingest
	// history (or the batch) already holds; by default they are skipped
	// and listed in Result.Skipped.
	AllowDuplicates bool
	// DropExtraColumns leaves out the files' columns the table lacks;
	// by default such a file is refused (see ExtraColumnsError).
	DropExtraColumns bool
	// AddColumns adds the files' columns the table lacks to its schema as
	// optional columns (rows already in the table read them as null), in
	// a commit of its own before the data's.
	AddColumns bool
	// Recursive makes a directory in Files contribute the *.parquet files
	// of its subdirectories too (see ExpandFiles).
	Recursive bool
	// MemoryBytes is the budget the rows in flight stay within: files are
	// read and written batch by batch, each batch about a quarter of it,
	// never a whole file (default DefaultMemoryBytes). Like the rewrite's
	// max-group-memory-bytes, it bounds memory, it refuses nothing.
	MemoryBytes int64
	// Allocator is what the files' batches are read into (default
	// memory.DefaultAllocator); a test passes a tracking one.
	Allocator memory.Allocator
}

// DefaultMemoryBytes is Config.MemoryBytes's default.
const DefaultMemoryBytes = 256 << 20

func (c Config) memoryBytes() int64 {
	if c.MemoryBytes <= 0 {
		return DefaultMemoryBytes
	}
	return c.MemoryBytes
}

func (c Config) allocator() memory.Allocator {
	if c.Allocator == nil {
		return memory.DefaultAllocator
	}
	return c.Allocator
}

// Validate checks the config without touching the table or the files.
// Errors match ErrConfig, or ErrPartitionSpec for the partitioning.
func (c Config) Validate() error {
	if len(c.Files) == 0 {
		return fmt.Errorf("%w: no files to ingest", ErrConfig)
	}
	if c.DropExtraColumns && c.AddColumns {
		return fmt.Errorf("%w: drop extra columns or add them, not both", ErrConfig)
	}
	if err := ValidatePartitionSpec(c.PartitionBy); err != nil {
		return err
	}
	if err := c.Checks.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return nil
}

// spec is what the config asks of the table, checked by its format.
func (c Config) spec(dst format.Appender) (format.AppendSpec, error) {
	if err := c.Validate(); err != nil {
		return format.AppendSpec{}, err
	}
	spec := format.AppendSpec{Create: c.Create, FormatVersion: c.FormatVersion, PartitionBy: c.PartitionBy, AddColumns: c.AddColumns, Log: c.logger()}
	if strings.TrimSpace(c.PartitionBy) != "" {
		terms, err := format.ParsePartitioning(c.PartitionBy)
		if err != nil {
			return format.AppendSpec{}, err
		}
		spec.Partitions = terms
	}
	if err := dst.CheckAppend(spec); err != nil {
		if errors.Is(err, ErrPartitionSpec) {
			return format.AppendSpec{}, err
		}
		return format.AppendSpec{}, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return spec, nil
}

func (c Config) formatVersion() int { return max(c.FormatVersion, 2) }

func (c Config) logger() *slog.Logger {
	if c.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Logger
}

// Result is what an ingest did.
type Result struct {
	// Table names the table: NS.T, or its location.
	Table   string
	Created bool
	// Commit is the commit the ingest made (an Iceberg snapshot id, a
	// Delta version), or when it committed nothing (every file was
	// skipped) the table's latest (0 or -1 for none, as its format
	// counts).
	Commit int64
	// Committed reports whether the ingest committed.
	Committed bool
	// Files counts the input files appended, DataFiles the data files
	// written for them, Rows their rows.
	Files     int
	DataFiles int
	Rows      int64
	// AddedColumns names the columns added to the table's schema.
	AddedColumns []string
	// Skipped lists the files left out as already ingested.
	Skipped []Skipped
}

// Skipped is a file an ingest left out because its content was ingested
// already, by an earlier commit (Commit) or earlier in the same batch
// (Commit nil).
type Skipped = format.Skipped

// FileReport is one file's validation report.
type FileReport struct {
	Path   string
	Report *validate.Report
}

// RefusedError reports files that failed validation; nothing was written.
// Files holds every file's report, the good ones too.
type RefusedError struct {
	Table string
	Files []FileReport
}

func (e *RefusedError) Error() string {
	var bad int
	var n int64
	for _, f := range e.Files {
		if !f.Report.OK() {
			bad++
			n += f.Report.Violations()
		}
	}
	return fmt.Sprintf("ingest into %s refused: %d violations in %d of %d files; nothing was written", e.Table, n, bad, len(e.Files))
}

// Run ingests cfg.Files into dst in one commit. A directory among the
// files stands for the *.parquet files in it. Files whose content the
// table's ingest history or the batch already holds are skipped unless
// cfg.AllowDuplicates is set; when all are, Run commits nothing and
// returns the skipped files. Files that fail validation return a
// *RefusedError; a file that does not fit the table's schema returns an
// error naming the file and column. In both cases, and whenever Run
// fails, the table is as it was.
func Run(ctx context.Context, dst format.Appender, cfg Config) (*Result, error) {
	spec, err := cfg.spec(dst)
	if err != nil {
		return nil, err
	}
	srcs, err := expandAndDigest(cfg.Files, cfg.Recursive)
	if err != nil {
		return nil, err
	}
	res := &Result{Table: dst.Name()}
	if !cfg.AllowDuplicates {
		srcs, res.Skipped = dedupBatch(srcs)
	}
	in := &ingester{cfg: cfg, dst: dst, log: cfg.logger()}
	for joined := false; ; joined = true {
		loaded, err := dst.Load(ctx, spec)
		if err != nil {
			return nil, err
		}
		res.Commit = loaded.Commit
		if loaded.Exists && !cfg.AllowDuplicates {
			srcs = skip(res, srcs, dst.Ingested(srcs))
		}
		if len(srcs) == 0 {
			return res, nil
		}
		err = in.append(ctx, loaded, srcs, res)
		if errors.Is(err, format.ErrCreatedMeanwhile) && !joined {
			// Append to the table another writer made, with the checks
			// of any table that exists: partitioning, files already
			// ingested, schema.
			in.log.Info("table created concurrently: appending to it", "table", dst.Name())
			continue
		}
		if err != nil {
			return nil, err
		}
		in.log.Info("ingest done", "table", dst.Name(), "files", res.Files, "rows", res.Rows, "commit", res.Commit, "skipped", len(res.Skipped))
		return res, nil
	}
}

// ingester is one Run.
type ingester struct {
	cfg Config
	dst format.Appender
	log *slog.Logger
}

// append validates and conforms srcs and has the table append them.
func (in *ingester) append(ctx context.Context, loaded format.Loaded, srcs []source, res *Result) error {
	files := make([]string, len(srcs))
	for i, s := range srcs {
		files[i] = s.Path
	}
	tgt, err := in.target(ctx, loaded, files[0])
	if err != nil {
		return err
	}
	if err := in.validateAll(ctx, tgt, files); err != nil {
		return err
	}
	var sc *arrow.Schema
	if loaded.Exists {
		sc, err = in.dst.Schema()
	} else {
		sc, err = in.newArrowSchema(ctx, tgt, files[0])
	}
	if err != nil {
		return err
	}
	extra, err := in.extraColumns(ctx, sc, files)
	if err != nil {
		return err
	}
	req := format.AppendRequest{Sources: srcs, Rows: in.rows(tgt), Schema: sc, Columns: tgt.cols,
		AllowDuplicates: in.cfg.AllowDuplicates, CommitRetries: in.cfg.CommitRetries}
	if in.cfg.AddColumns {
		req.AddColumns = extra
	}
	out, err := in.dst.Append(ctx, req)
	if ce, ok := errors.AsType[*ConformError](err); ok {
		return fmt.Errorf("ingest into %s refused, nothing was written: %w", in.dst.Name(), ce)
	}
	if err != nil {
		return err
	}
	res.Created = res.Created || out.Created
	res.Committed, res.Commit = out.Committed, out.Commit
	res.Files, res.DataFiles, res.Rows = out.Files, out.DataFiles, out.Rows
	res.AddedColumns = out.AddedColumns
	res.Skipped = append(res.Skipped, out.Skipped...)
	return nil
}

// rows streams a source's batches conformed to a schema: what an Append
// writes.
func (in *ingester) rows(tgt target) func(context.Context, format.Source, *arrow.Schema, func(arrow.RecordBatch) error) error {
	return func(ctx context.Context, src format.Source, sc *arrow.Schema, fn func(arrow.RecordBatch) error) error {
		c := &conformStream{ctx: ctx, schema: sc,
			conf: conformOpts{geometry: tgt.cols.Geometry, addBBox: in.cfg.AddBBox, dropExtra: in.cfg.DropExtraColumns},
			read: readOpts{mem: in.cfg.allocator(), budget: in.cfg.memoryBytes()}}
		return c.file(src.Path, fn)
	}
}

// skip records found in res.Skipped and returns srcs without them.
func skip(res *Result, srcs []source, found []Skipped) []source {
	res.Skipped = append(res.Skipped, found...)
	return format.Unskipped(srcs, found)
}

// validateAll validates every file and refuses the batch on any violation.
func (in *ingester) validateAll(ctx context.Context, t target, files []string) error {
	cfg := in.cfg.Checks
	cfg.Column = in.cfg.GeometryColumn
	if cfg.Column == "" {
		cfg.Column = t.cols.Geometry
	}
	cfg.CRS = t.cols.CRS
	cfg.RequireBBox = t.wantBBox && !in.cfg.AddBBox
	refused := &RefusedError{Table: in.dst.Name()}
	ok := true
	for i, path := range files {
		rep, err := validate.File(ctx, path, cfg)
		if err != nil {
			return err
		}
		refused.Files = append(refused.Files, FileReport{Path: path, Report: rep})
		ok = ok && rep.OK()
		if in.cfg.Progress != nil {
			in.cfg.Progress(i+1, len(files))
		}
	}
	if ok {
		return nil
	}
	return refused
}
