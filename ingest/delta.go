package ingest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/spatial"
)

// Ingest history of a Delta table. Each file an ingest appends is recorded
// in the same commit by a txn action (Delta's transaction identifiers)
// whose appId is TxnAppPrefix followed by the sha256 of the file's bytes,
// and whose version is the table version of that commit. A file whose
// appId the snapshot holds is already ingested: the snapshot keeps the
// latest txn of every appId, checkpoints included, so the history is never
// cut short as an Iceberg snapshot lookback is. A table that sets
// delta.setTransactionRetentionDuration lets other writers drop old txns;
// files ingested before that window are then no longer recognised.
const TxnAppPrefix = "geocompact-ingest:"

// TxnAppID is the txn appId recording the ingest of a file with content
// digest (hex sha256).
func TxnAppID(digest string) string { return TxnAppPrefix + digest }

// DefaultDeltaCommitAttempts bounds the commit attempts of a Delta ingest
// whose Config.CommitRetries is 0.
const DefaultDeltaCommitAttempts = 10

// DeltaResult is what an ingest into a Delta table did.
type DeltaResult struct {
	Location string `json:"location"`
	Created  bool   `json:"created"`
	// Version is the table version committed; when nothing was committed,
	// the table's latest version (-1 for no table).
	Version int64 `json:"version"`
	// Files counts the input files appended, DataFiles the data files
	// written for them (one per input file and partition), Rows their rows.
	Files     int   `json:"files"`
	DataFiles int   `json:"data_files"`
	Rows      int64 `json:"rows"`
	// Skipped lists the files left out as already ingested.
	Skipped []DeltaSkipped `json:"skipped,omitempty"`
}

// DeltaSkipped is a file a Delta ingest left out: its content was
// ingested already, by the table version Version, or earlier in the same
// batch (Previous names that file).
type DeltaSkipped struct {
	Path     string `json:"path"`
	Digest   string `json:"sha256"`
	Previous string `json:"previous,omitempty"`
	Version  *int64 `json:"version,omitempty"`
}

// RunDelta ingests cfg.Files into the Delta table at location (a directory,
// file: URL or s3:// URI) in one commit, as Run does for an Iceberg table:
// every file is validated and conformed to the table's schema before
// anything is written, files already ingested are skipped (see
// TxnAppPrefix) unless cfg.AllowDuplicates is set, and any refusal leaves
// the table as it was with nothing written. With cfg.Create a missing
// table is created from the first file in the same commit (version 0),
// partitioned by the columns cfg.PartitionBy lists. cfg.Table is not used;
// cfg.FormatVersion and cfg.AddColumns do not apply to Delta tables.
func RunDelta(ctx context.Context, location string, cfg Config) (*DeltaResult, error) {
	parts, err := cfg.validateDelta(location)
	if err != nil {
		return nil, err
	}
	srcs, err := expandAndDigest(cfg.Files, cfg.Recursive)
	if err != nil {
		return nil, err
	}
	res := &DeltaResult{Location: location, Version: -1}
	if !cfg.AllowDuplicates {
		var dups []Skipped
		srcs, dups = dedupBatch(srcs)
		for _, s := range dups {
			res.Skipped = append(res.Skipped, DeltaSkipped{Path: s.Path, Digest: s.Digest, Previous: s.Previous})
		}
	}
	tbl, snap, err := openDelta(ctx, location, cfg.Create)
	if err != nil {
		return nil, err
	}
	if snap != nil {
		if err := checkDeltaTable(snap, location, parts); err != nil {
			return nil, err
		}
		res.Version = snap.Version
		if !cfg.AllowDuplicates {
			srcs = skipIngested(res, srcs, snap)
		}
	}
	if len(srcs) == 0 {
		return res, nil
	}
	cfg.Table = location
	d := &deltaIngest{ingester: &ingester{cfg: cfg, log: cfg.logger()}, tbl: tbl, read: snap, parts: parts}
	d.setSources(srcs)
	if err := d.run(ctx, res); err != nil {
		return nil, err
	}
	d.log.Info("ingest done", "table", location, "files", res.Files, "rows", res.Rows, "version", res.Version, "skipped", len(res.Skipped))
	return res, nil
}

// validateDelta checks the config for a Delta ingest and returns the
// partition columns it asks for.
func (c Config) validateDelta(location string) ([]string, error) {
	switch {
	case location == "":
		return nil, fmt.Errorf("%w: no Delta table location", ErrConfig)
	case len(c.Files) == 0:
		return nil, fmt.Errorf("%w: no files to ingest", ErrConfig)
	case c.FormatVersion != 0 && c.FormatVersion != 2:
		return nil, fmt.Errorf("%w: a format version applies to Iceberg tables only", ErrConfig)
	case c.AddColumns:
		return nil, fmt.Errorf("%w: adding columns to a Delta table is not supported; %w", ErrConfig, ErrNoAddColumns)
	case !c.Create && c.PartitionBy != "":
		return nil, fmt.Errorf("%w: partition columns apply only when creating the table", ErrConfig)
	}
	if err := c.Checks.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return deltaPartitionColumns(c.PartitionBy)
}

// deltaPartitionColumns parses a partition spec for a Delta table: Delta
// partitions by column values, so only identity terms ("col" or
// "identity(col)") are accepted. Errors match ErrPartitionSpec.
func deltaPartitionColumns(expr string) ([]string, error) {
	if strings.TrimSpace(expr) == "" {
		return nil, nil
	}
	terms, err := parsePartitionTerms(expr)
	if err != nil {
		return nil, err
	}
	cols := make([]string, len(terms))
	for i, t := range terms {
		if t.name != "identity" {
			return nil, fmt.Errorf("%w: partition %q: a Delta table partitions by column values only; name the column itself", ErrPartitionSpec, t.text)
		}
		cols[i] = t.column
	}
	return cols, nil
}

// openDelta opens the table at location and loads its latest snapshot, or
// returns a nil snapshot when there is no table and create is set.
func openDelta(ctx context.Context, location string, create bool) (*delta.Table, *delta.Snapshot, error) {
	tbl, err := delta.Open(ctx, location)
	if err != nil {
		return nil, nil, err
	}
	snap, err := tbl.Snapshot(ctx)
	switch {
	case errors.Is(err, delta.ErrNotATable) && !create:
		return nil, nil, fmt.Errorf("no Delta table at %s (no commits under _delta_log): %w", location, ErrNoTable)
	case errors.Is(err, delta.ErrNotATable):
		return tbl, nil, nil
	case err != nil:
		return nil, nil, fmt.Errorf("load Delta table %s: %w", location, err)
	}
	return tbl, snap, nil
}

// checkDeltaTable refuses, before anything is read, a table this package
// cannot write and partition columns that differ from the table's.
func checkDeltaTable(s *delta.Snapshot, location string, parts []string) error {
	if err := delta.CheckWrite(s.Protocol, s.Metadata); err != nil {
		return fmt.Errorf("ingest into %s: %w", location, err)
	}
	if parts != nil && !slices.Equal(parts, s.Metadata.PartitionColumns) {
		have := "unpartitioned"
		if len(s.Metadata.PartitionColumns) > 0 {
			have = "partitioned by " + strings.Join(s.Metadata.PartitionColumns, ", ")
		}
		//nolint:staticcheck // ST1005: the message starts with a name
		return fmt.Errorf("Delta table %s exists %s, not by %s as asked; %w to append with the table's partitioning",
			location, have, strings.Join(parts, ", "), ErrPartitioning)
	}
	return nil
}

// skipIngested records in res the files of srcs whose txn the snapshot
// holds and returns the others.
func skipIngested(res *DeltaResult, srcs []source, s *delta.Snapshot) []source {
	return slices.DeleteFunc(slices.Clone(srcs), func(src source) bool {
		v, ok := s.Txns[TxnAppID(src.digest)]
		if ok {
			res.Skipped = append(res.Skipped, DeltaSkipped{Path: src.path, Digest: src.digest, Version: &v})
		}
		return ok
	})
}

// deltaTarget is what files are checked against for an existing table:
// its geometry column, found as the Delta rewrite finds it, from the
// logical schema and the table properties (column names one they do not).
func deltaTarget(s *delta.Snapshot, location, column string) (target, error) {
	asc, err := s.ArrowSchema()
	if err != nil {
		return target{}, fmt.Errorf("table %s: %w", location, err)
	}
	cols, err := spatial.DiscoverColumns(asc, nil, spatial.Hints{Column: column, Props: s.Metadata.Configuration})
	if err != nil {
		return target{}, fmt.Errorf("table %s: %w", location, err)
	}
	return target{cols: cols, wantBBox: cols.HasBBox()}, nil
}
