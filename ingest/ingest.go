// Package ingest appends validated GeoParquet files to a spatial Iceberg
// table in one commit: every file is validated first (WKB, CRS against the
// table's, bbox columns, nulls), conformed to the table's schema (with bbox
// columns computed when asked), and only then written and committed. Any
// refusal leaves the table as it was and writes nothing; a table created
// for a first ingest that fails is dropped again.
package ingest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/validate"
)

// ErrConfig marks a Config that cannot be used; nothing was read or
// written. The CLI reports it as a usage error.
var ErrConfig = errors.New("ingest: bad config")

// Reasons an ingest is refused, in library terms; a front end matches
// them (errors.Is) to word them as its own flags.
var (
	// ErrNoTable: the table does not exist and Config.Create is off.
	ErrNoTable = errors.New("create it from the files")
	// ErrPartitioning: Config.PartitionBy differs from an existing
	// table's partitioning.
	ErrPartitioning = errors.New("drop the requested partitioning")
	// ErrNoBBox: the files lack the bbox columns and Config.AddBBox is
	// off.
	ErrNoBBox = errors.New("compute the boxes from the geometry")
	// ErrNoFiles: a directory without Parquet files at its top level.
	ErrNoFiles = errors.New("read subdirectories too")
	// ErrNoAddColumns: adding columns to a Delta table.
	ErrNoAddColumns = errors.New("leave the extra columns out")
)

// Config is one ingest.
type Config struct {
	// Table is the table to append to, "ns.t".
	Table string
	// Files are the GeoParquet files to append, all in one commit.
	Files []string
	// Create makes the table from the first file when it does not exist.
	Create bool
	// AddBBox computes missing bbox columns from the WKB.
	AddBBox bool
	// FormatVersion of a created table: 2 (WKB plus bbox columns, the
	// default when 0) or 3 (the Iceberg geometry type).
	FormatVersion int
	// PartitionBy is the partition spec of a created table, e.g.
	// "bucket(16, id)" (see ParsePartitionSpec).
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

// Validate checks the config without touching the catalog or the files.
// Errors match ErrConfig.
func (c Config) Validate() error {
	if _, err := catalogs.ParseIdentifier(c.Table); err != nil {
		return fmt.Errorf("%w: table: %w", ErrConfig, err)
	}
	if len(c.Files) == 0 {
		return fmt.Errorf("%w: no files to ingest", ErrConfig)
	}
	if c.FormatVersion != 0 && c.FormatVersion != 2 && c.FormatVersion != 3 {
		return fmt.Errorf("%w: format version %d: want 2 or 3", ErrConfig, c.FormatVersion)
	}
	if !c.Create && (c.PartitionBy != "" || c.FormatVersion > 2) {
		return fmt.Errorf("%w: a partition spec and a format version apply only when creating the table", ErrConfig)
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

func (c Config) formatVersion() int { return max(c.FormatVersion, 2) }

func (c Config) logger() *slog.Logger {
	if c.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Logger
}

// Result is what an ingest did.
type Result struct {
	Table   string `json:"table"`
	Created bool   `json:"created"`
	// SnapshotID is the snapshot the ingest committed, or when it
	// committed nothing (every file was skipped) the table's current one
	// (0 for a table without snapshots).
	SnapshotID int64 `json:"snapshot_id"`
	// Committed reports whether the ingest committed a snapshot.
	Committed bool  `json:"committed"`
	Files     int   `json:"files"`
	Rows      int64 `json:"rows"`
	// AddedColumns names the columns added to the table's schema.
	AddedColumns []string `json:"added_columns,omitempty"`
	// Skipped lists the files left out as already ingested.
	Skipped []Skipped `json:"skipped,omitempty"`
}

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

// Run ingests cfg.Files into cfg.Table in one commit. A directory among
// the files stands for the *.parquet files in it. Files whose content the
// table's ingest history or the batch already holds are skipped (see
// SourcesKey) unless cfg.AllowDuplicates is set; when all are, Run commits
// nothing and returns the skipped files. Files that fail validation return
// a *RefusedError; a file that does not fit the table's schema returns an
// error naming the file and column. In both cases, and whenever Run fails,
// the table is as it was.
func Run(ctx context.Context, cat catalog.Catalog, cfg Config) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	srcs, err := expandAndDigest(cfg.Files, cfg.Recursive)
	if err != nil {
		return nil, err
	}
	res := &Result{Table: cfg.Table}
	if !cfg.AllowDuplicates {
		srcs, res.Skipped = dedupBatch(srcs)
	}
	in := &ingester{cfg: cfg, log: cfg.logger()}
	in.cat = &dedupCatalog{Catalog: catalogs.Wrap(cat), pending: &in.pending, log: in.log}
	tbl, err := loadOrNil(ctx, in.cat, cfg)
	if err != nil {
		return nil, err
	}
	if err := checkSpec(tbl, cfg); err != nil {
		return nil, err
	}
	if tbl != nil && !cfg.AllowDuplicates {
		srcs = in.skip(res, srcs, ingested(tbl.Metadata(), srcs, in.log))
	}
	if len(srcs) == 0 {
		if tbl != nil && tbl.CurrentSnapshot() != nil {
			res.SnapshotID = tbl.CurrentSnapshot().SnapshotID
		}
		return res, nil
	}
	in.setSources(srcs)
	if err := in.run(ctx, tbl, res); err != nil {
		return nil, err
	}
	in.log.Info("ingest done", "table", cfg.Table, "files", res.Files, "rows", res.Rows, "snapshot_id", res.SnapshotID, "skipped", len(res.Skipped))
	return res, nil
}

// run validates, conforms, writes and commits in.cfg.Files. A commit that
// finds some of them ingested concurrently is redone without them.
func (in *ingester) run(ctx context.Context, tbl *table.Table, res *Result) error {
	tgt, err := in.target(ctx, tbl)
	if err != nil {
		return err
	}
	if err := in.validateAll(ctx, tgt); err != nil {
		return err
	}
	sc, props, arrowSc, err := in.tableSchema(ctx, tbl, tgt)
	if err != nil {
		return err
	}
	extra, err := in.extraColumns(ctx, arrowSc)
	if err != nil {
		return err
	}
	if tbl == nil {
		if _, err := CreateTable(ctx, in.cat, in.cfg.Table, sc, in.cfg.PartitionBy, props); err != nil {
			if errors.Is(err, catalog.ErrTableAlreadyExists) {
				return in.joinCreated(ctx, res)
			}
			return err
		}
		res.Created = true
	}
	if len(extra) > 0 && in.cfg.AddColumns {
		if arrowSc, err = in.addColumns(ctx, tgt, extra); err != nil {
			if res.Created {
				in.dropCreated(ctx)
			}
			return err
		}
		res.AddedColumns = fieldNames(extra)
	}
	for {
		err := in.writeAndCommit(ctx, arrowSc, tgt, res)
		dup, ok := errors.AsType[*duplicateError](err)
		if !ok {
			return err
		}
		srcs := in.skip(res, in.sources, dup.found)
		if len(srcs) == 0 {
			return nil
		}
		in.setSources(srcs)
	}
}

// joinCreated goes on with a table that another writer created between
// this ingest's look and its own create: the ingest appends to it, with
// the same checks as to any table that exists (partition spec, files
// already ingested, schema).
func (in *ingester) joinCreated(ctx context.Context, res *Result) error {
	in.log.Info("table created concurrently: appending to it", "table", in.cfg.Table)
	tbl, err := loadOrNil(ctx, in.cat, in.cfg)
	if err != nil {
		return err
	}
	if tbl == nil {
		return fmt.Errorf("create %s: the table exists but does not load", in.cfg.Table)
	}
	if err := checkSpec(tbl, in.cfg); err != nil {
		return err
	}
	srcs := in.sources
	if !in.cfg.AllowDuplicates {
		srcs = in.skip(res, srcs, ingested(tbl.Metadata(), srcs, in.log))
	}
	if len(srcs) == 0 {
		return nil
	}
	in.setSources(srcs)
	return in.run(ctx, tbl, res)
}

// writeAndCommit reads the files conformed to arrowSc and commits them.
func (in *ingester) writeAndCommit(ctx context.Context, arrowSc *arrow.Schema, tgt target, res *Result) error {
	batches := &conformStream{ctx: ctx, paths: in.cfg.Files, schema: arrowSc,
		conf: conformOpts{geometry: tgt.cols.Geometry, addBBox: in.cfg.AddBBox, dropExtra: in.cfg.DropExtraColumns},
		read: readOpts{mem: in.cfg.allocator(), budget: in.cfg.memoryBytes()}}
	snapID, err := in.commit(ctx, batches)
	if _, dup := errors.AsType[*duplicateError](err); dup {
		return err
	}
	if err != nil {
		if res.Created {
			in.dropCreated(ctx)
		}
		if ce, ok := errors.AsType[*ConformError](err); ok {
			return fmt.Errorf("ingest into %s refused, nothing was written: %w", in.cfg.Table, ce)
		}
		return fmt.Errorf("ingest into %s: %w", in.cfg.Table, err)
	}
	res.SnapshotID, res.Files, res.Rows, res.Committed = snapID, len(in.cfg.Files), in.wrote, true
	return nil
}

// skip records found in res.Skipped and returns srcs without them.
func (in *ingester) skip(res *Result, srcs []source, found []Skipped) []source {
	res.Skipped = append(res.Skipped, found...)
	return slices.DeleteFunc(slices.Clone(srcs), func(s source) bool {
		return slices.ContainsFunc(found, func(f Skipped) bool { return f.Digest == s.digest })
	})
}

// setSources makes srcs the files this ingest writes, and, unless
// duplicates are allowed, the files its commits check the history for.
func (in *ingester) setSources(srcs []source) {
	in.sources = srcs
	in.cfg.Files = make([]string, len(srcs))
	for i, s := range srcs {
		in.cfg.Files[i] = s.path
	}
	if !in.cfg.AllowDuplicates {
		in.pending = srcs
	}
}

// loadOrNil loads the table, or returns nil when it does not exist and
// cfg.Create is set.
func loadOrNil(ctx context.Context, cat catalog.Catalog, cfg Config) (*table.Table, error) {
	ident, _ := catalogs.ParseIdentifier(cfg.Table)
	tbl, err := cat.LoadTable(ctx, ident)
	switch {
	case errors.Is(err, catalog.ErrNoSuchTable) && !cfg.Create:
		if hint := catalogs.TableHint(ctx, cat, cfg.Table); strings.HasPrefix(hint, "; did you mean") {
			return nil, fmt.Errorf("table %s does not exist%s Or %w", cfg.Table, hint, ErrNoTable)
		}
		return nil, fmt.Errorf("table %s does not exist (%w)", cfg.Table, ErrNoTable)
	case errors.Is(err, catalog.ErrNoSuchTable):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("load table %s: %w", cfg.Table, err)
	}
	return tbl, nil
}

// checkSpec refuses a partition spec that differs from the existing
// table's, naming both, rather than ignoring it.
func checkSpec(tbl *table.Table, cfg Config) error {
	if tbl == nil || cfg.PartitionBy == "" {
		return nil
	}
	want, err := ParsePartitionSpec(cfg.PartitionBy, tbl.Schema())
	if err != nil {
		return err
	}
	if have := tbl.Spec(); !SamePartitioning(want, have) {
		return fmt.Errorf("table %s exists partitioned by %s, not by %s as asked; %w to append with the table's spec",
			cfg.Table, FormatPartitionSpec(have, tbl.Schema()), FormatPartitionSpec(want, tbl.Schema()), ErrPartitioning)
	}
	return nil
}

// ingester is one Run.
type ingester struct {
	cfg     Config
	cat     catalog.Catalog
	log     *slog.Logger
	sources []source // the files being ingested, with digests
	pending []source // the files commits check the history for
	wrote   int64    // the rows of the files last written, as the commit gate counted them
}

// dropCreated drops the table a failed first ingest created, so none is
// left behind empty.
//
// Only a table that no snapshot was committed to is dropped: another
// ingest that found the table this one created may have appended to it.
func (in *ingester) dropCreated(ctx context.Context) {
	ident, _ := catalogs.ParseIdentifier(in.cfg.Table)
	ctx = context.WithoutCancel(ctx)
	if tbl, err := in.cat.LoadTable(ctx, ident); err != nil || tbl.CurrentSnapshot() != nil {
		in.log.Warn("keep table created by a failed ingest", "table", in.cfg.Table, "reason", "it has a snapshot, or does not load", "error", err)
		return
	}
	if err := in.cat.DropTable(context.WithoutCancel(ctx), ident); err != nil {
		in.log.Warn("drop table after failed ingest", "table", in.cfg.Table, "error", err)
	}
}

// validateAll validates every file and refuses the batch on any violation.
func (in *ingester) validateAll(ctx context.Context, t target) error {
	cfg := in.cfg.Checks
	cfg.Column = in.cfg.GeometryColumn
	if cfg.Column == "" {
		cfg.Column = t.cols.Geometry
	}
	cfg.CRS = t.cols.CRS
	cfg.RequireBBox = t.wantBBox && !in.cfg.AddBBox
	refused := &RefusedError{Table: in.cfg.Table}
	ok := true
	for i, path := range in.cfg.Files {
		rep, err := validate.File(ctx, path, cfg)
		if err != nil {
			return err
		}
		refused.Files = append(refused.Files, FileReport{Path: path, Report: rep})
		ok = ok && rep.OK()
		if in.cfg.Progress != nil {
			in.cfg.Progress(i+1, len(in.cfg.Files))
		}
	}
	if ok {
		return nil
	}
	return refused
}

// tableSchema is the Arrow schema the files are conformed to: the table's,
// or for a table still to be created, the Iceberg schema and properties
// derived from the first file too.
func (in *ingester) tableSchema(ctx context.Context, tbl *table.Table, t target) (*iceberg.Schema, iceberg.Properties, *arrow.Schema, error) {
	var (
		sc    *iceberg.Schema
		props iceberg.Properties
		err   error
	)
	if tbl == nil {
		if sc, props, err = in.newTableSchema(ctx, t); err != nil {
			return nil, nil, nil, err
		}
	} else {
		sc, props = tbl.Schema(), tbl.Properties()
	}
	arrowSc, err := table.SchemaToArrowSchemaWithOptions(sc, table.ArrowSchemaOptions{TableProperties: props})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("arrow schema of %s: %w", in.cfg.Table, err)
	}
	return sc, props, arrowSc, nil
}
