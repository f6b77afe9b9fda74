package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/ingest"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/table/optval"
	"github.com/geocompact/geocompact/validate"
)

func init() { register(newIngestCmd) }

type ingestOptions struct {
	g      *globalOptions
	cfg    ingest.Config
	table  tableFlags
	memory string // --memory-budget as given, parsed into cfg.MemoryBytes
}

func newIngestCmd(g *globalOptions) *cobra.Command {
	o := &ingestOptions{g: g, cfg: ingest.Config{FormatVersion: 2, Checks: validate.DefaultConfig()}}
	cmd := &cobra.Command{
		Use:   "ingest (--table NS.T | --delta LOCATION) FILE...",
		Short: "Validate GeoParquet files and append them to a table in one commit",
		Long: `Ingest validates every file first (WKB, CRS against the table's, bbox columns,
nulls, schema fit) and appends all of them in a single commit. Any violation
refuses the whole batch: nothing is written and the table is unchanged.

--create makes the table from the first file's schema and GeoParquet
metadata: v2 stores WKB in a binary column beside double bbox columns; v3
uses the Iceberg geometry type with the data's CRS. The geometry column,
encoding and CRS are recorded in table properties.

Ingest is safe to retry: each commit records the sha256 and name of every
file it appended in its snapshot summary, and a file whose content the
table's snapshot history (or the same batch) already holds is skipped with a
message; an ingest where every file is skipped commits nothing and exits 0.
--allow-duplicates appends such files anyway. A directory argument ingests
the *.parquet files in it, sorted; --recursive descends into subdirectories.

A file with columns the table lacks is refused, naming them, before any
data is read. --drop-extra-columns leaves those columns out; --add-columns
evolves the table's schema first, adding them as optional columns (rows
already in the table read them as null), in a commit of its own.
--partition-by takes Iceberg's transforms or Spark's spellings (days(ts),
hours(ts), months, years, bucket(N, col), truncate(W, col)); on an existing
table it must match the table's spec.

--delta LOCATION appends to a Delta table instead (a directory, file: URL or
s3://BUCKET/PREFIX), in one Delta commit with per-file stats. Each file's
content is recorded by a txn action, so a re-run skips what is already in
the table. --create makes the table (in that same commit) when LOCATION has
no _delta_log; --partition-by then names partition columns.`,
		Example: `  $ geocompact ingest --table gis.parcels --create --add-bbox parcels-*.parquet
  $ geocompact ingest --table gis.parcels --add-columns parcels-with-owner.parquet
  $ geocompact ingest --table gis.pings --create --format-version 3 --partition-by 'bucket(16, id)' pings.parquet
  $ geocompact ingest --delta ./lake/parcels --create --partition-by region parcels-*.parquet`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.cfg.Files = args
			if err := o.complete(); err != nil {
				return err
			}
			return runIngest(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	o.table.register(f, "table to append to, NAMESPACE.TABLE", "Delta table to append to")
	f.BoolVar(&o.cfg.Create, "create", false, "create the table from the first file when it does not exist")
	f.BoolVar(&o.cfg.AddBBox, "add-bbox", false, "compute missing bbox columns from the WKB")
	f.IntVar(&o.cfg.FormatVersion, "format-version", o.cfg.FormatVersion, "format version of a created table: 2 (WKB + bbox columns) or 3 (geometry type)")
	f.StringVar(&o.cfg.PartitionBy, "partition-by", "", "partition spec of a created table, e.g. 'bucket(16, id), days(ts)' (Spark's spellings too); an existing table's spec must match")
	f.StringVar(&o.cfg.GeometryColumn, "geometry-column", "", "geometry column of the files (default: GeoParquet primary_column)")
	f.Float64Var(&o.cfg.Checks.Tolerance, "tolerance", o.cfg.Checks.Tolerance, "largest allowed difference between a bbox column and the geometry's envelope")
	f.BoolVar(&o.cfg.Checks.AllowNull, "allow-null", false, "accept null geometries")
	f.IntVar(&o.cfg.Checks.MaxExamples, "max-examples", o.cfg.Checks.MaxExamples, "offending rows to show per refused file")
	f.BoolVar(&o.cfg.Checks.Strict, "strict", false, "refuse files with warnings too (malformed GeoParquet hints, antimeridian crossings)")
	f.BoolVar(&o.cfg.AllowDuplicates, "allow-duplicates", false, "append files whose content the table already holds (default: skip them)")
	f.BoolVar(&o.cfg.DropExtraColumns, "drop-extra-columns", false, "leave out the files' columns the table lacks (default: refuse such files)")
	f.BoolVar(&o.cfg.AddColumns, "add-columns", false, "add the files' columns the table lacks to its schema as optional columns")
	f.BoolVar(&o.cfg.Recursive, "recursive", false, "take *.parquet files from subdirectories of directory arguments too")
	f.StringVar(&o.memory, "memory-budget", fmt.Sprintf("%dMiB", ingest.DefaultMemoryBytes>>20), "memory the rows in flight stay within; files are read and written in batches of about a quarter of it")
	cmd.MarkFlagsOneRequired("table", "delta")
	cmd.MarkFlagsMutuallyExclusive("table", "delta")
	return cmd
}

func (o *ingestOptions) complete() error {
	budget, err := optval.ParseSize(o.memory)
	if err != nil || budget < 1<<20 {
		return usageErrorf("--memory-budget %q: want a size of at least 1MiB, e.g. 256MiB", o.memory)
	}
	o.cfg.MemoryBytes = budget
	o.cfg.Logger = o.g.Logger()
	if o.table.ref().IsDelta() {
		return o.completeDelta()
	}
	if _, err := catalogs.ParseIdentifier(o.table.name); err != nil {
		return usageErrorf("--table: %v", err)
	}
	if o.cfg.FormatVersion != 2 && o.cfg.FormatVersion != 3 {
		return usageErrorf("--format-version %d: want 2 or 3", o.cfg.FormatVersion)
	}
	if !o.cfg.Create && (o.cfg.PartitionBy != "" || o.cfg.FormatVersion != 2) {
		return usageErrorf("--partition-by and --format-version apply only with --create")
	}
	if err := o.cfg.Validate(); err != nil {
		return &usageError{err}
	}
	return nil
}

// completeDelta checks the flags of an ingest into a Delta table.
func (o *ingestOptions) completeDelta() error {
	if o.cfg.FormatVersion != 2 {
		return usageErrorf("--format-version applies to Iceberg tables only, not with --delta")
	}
	if o.cfg.AddColumns {
		return usageErrorf("--add-columns is not supported with --delta; use --drop-extra-columns to leave extra columns out")
	}
	if !o.cfg.Create && o.cfg.PartitionBy != "" {
		return usageErrorf("--partition-by applies only with --create")
	}
	if o.cfg.DropExtraColumns && o.cfg.AddColumns {
		return usageErrorf("--drop-extra-columns and --add-columns exclude each other")
	}
	if err := o.cfg.Checks.Validate(); err != nil {
		return &usageError{err}
	}
	return nil
}

func runIngest(ctx context.Context, o *ingestOptions) error {
	dst, retries, closeDst, err := o.g.openAppender(ctx, o.table.ref())
	if err != nil {
		return err
	}
	defer closeDst()
	cfg := o.cfg
	cfg.CommitRetries = retries
	prog := newProgress(o.g, "validating", "files")
	cfg.Progress = prog.Update
	res, err := ingest.Run(ctx, dst, cfg)
	prog.Done()
	if err != nil {
		return ingestError(o, err)
	}
	if o.table.ref().IsDelta() {
		return writeDeltaIngest(o.g, res)
	}
	return writeIcebergIngest(o.g, res)
}

// ingestError gives a failed ingest its exit code: 3 with the validation
// reports on stdout for refused files, 2 for bad flags, 4 for a commit
// that lost to a concurrent change.
func ingestError(o *ingestOptions, err error) error {
	if refused, ok := errors.AsType[*ingest.RefusedError](err); ok {
		if werr := writeValidateResult(o.g.IO.Out, o.g.JSON, refusedResult(refused)); werr != nil {
			return werr
		}
		return &exitCodeError{code: exitViolation, err: err}
	}
	switch {
	case errors.Is(err, ingest.ErrPartitionSpec):
		return usageErrorf("--partition-by: %v", err)
	case errors.Is(err, ingest.ErrConfig):
		return &usageError{err}
	case errors.As(err, new(*delta.ConflictError)), errors.As(err, new(*delta.VersionExistsError)):
		return &exitCodeError{code: exitConflict, err: err}
	}
	return err
}

// refusedResult is a refused ingest's reports as validate prints them.
func refusedResult(e *ingest.RefusedError) validateResult {
	res := validateResult{OK: true}
	for _, f := range e.Files {
		res.Inputs = append(res.Inputs, inputReport{Input: f.Path, OK: f.Report.OK(), Violations: f.Report.Violations(), Report: f.Report})
		res.OK = res.OK && f.Report.OK()
	}
	return res
}
