package deltatable

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/table"
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

// DefaultAppendAttempts bounds the commit attempts of an append whose
// request's CommitRetries is 0.
const DefaultAppendAttempts = 10

// Appender is the Delta table at location (a directory, file: URL or
// s3:// URI) as an ingest appends to it: in one commit with per-file
// stats and a txn per file (see TxnAppPrefix). A table made for an ingest
// is created in that same commit (version 0), partitioned by the columns
// the spec names: Delta partitions by column values only.
func Appender(location string) table.Appender { return &appender{location: location} }

// appender is one ingest's Delta table: the snapshot the sources were
// checked on (nil: the table is to be created), and once written, each
// source's data files.
type appender struct {
	location string
	parts    []string // partition columns asked for; nil: none asked
	tbl      *delta.Table
	read     *delta.Snapshot
	log      *slog.Logger
	create   []delta.Action // protocol and metaData of a table to create
	sources  []table.Source
	written  [][]*delta.Add // by source
	rows     []int64        // by source
}

var _ table.Appender = (*appender)(nil)

func (a *appender) Name() string { return a.location }

// CheckAppend refuses what a Delta table cannot take: a format version,
// added columns, or a partitioning by anything but column values.
func (a *appender) CheckAppend(spec table.AppendSpec) error {
	switch {
	case a.location == "":
		return errors.New("no Delta table location")
	case spec.FormatVersion != 0 && spec.FormatVersion != 2:
		return errors.New("a format version applies to Iceberg tables only")
	case spec.AddColumns:
		return fmt.Errorf("adding columns to a Delta table is not supported; %w", table.ErrNoAddColumns)
	case !spec.Create && spec.PartitionBy != "":
		return errors.New("partition columns apply only when creating the table")
	}
	_, err := partitionColumns(spec)
	return err
}

// partitionColumns are the columns spec partitions by, nil for none; a
// Delta table partitions by column values only.
func partitionColumns(spec table.AppendSpec) ([]string, error) {
	var cols []string
	for _, t := range spec.Partitions {
		if t.Transform != "identity" {
			return nil, fmt.Errorf("%w: partition %q: a Delta table partitions by column values only; name the column itself", table.ErrPartitionSpec, t.Text)
		}
		cols = append(cols, t.Column)
	}
	return cols, nil
}

// Load opens the table and loads its latest snapshot, refusing a table
// geocompact cannot write and partition columns that differ from the
// table's.
func (a *appender) Load(ctx context.Context, spec table.AppendSpec) (table.Loaded, error) {
	parts, err := partitionColumns(spec)
	if err != nil {
		return table.Loaded{}, err
	}
	a.log, a.parts = spec.Logger(), parts
	tbl, err := delta.Open(ctx, a.location)
	if err != nil {
		return table.Loaded{}, err
	}
	snap, err := tbl.Snapshot(ctx)
	switch {
	case errors.Is(err, delta.ErrNotATable) && !spec.Create:
		return table.Loaded{}, fmt.Errorf("no Delta table at %s (no commits under _delta_log): %w", a.location, table.ErrNoTable)
	case errors.Is(err, delta.ErrNotATable):
		a.tbl, a.read = tbl, nil
		return table.Loaded{Commit: -1}, nil
	case err != nil:
		return table.Loaded{}, fmt.Errorf("load Delta table %s: %w", a.location, err)
	}
	if err := delta.CheckWrite(snap.Protocol, snap.Metadata); err != nil {
		return table.Loaded{}, fmt.Errorf("ingest into %s: %w", a.location, err)
	}
	if a.parts != nil && !slices.Equal(a.parts, snap.Metadata.PartitionColumns) {
		have := "unpartitioned"
		if len(snap.Metadata.PartitionColumns) > 0 {
			have = "partitioned by " + strings.Join(snap.Metadata.PartitionColumns, ", ")
		}
		//nolint:staticcheck // ST1005: the message starts with a name
		return table.Loaded{}, fmt.Errorf("Delta table %s exists %s, not by %s as asked; %w to append with the table's partitioning",
			a.location, have, strings.Join(a.parts, ", "), table.ErrPartitioning)
	}
	a.tbl, a.read = tbl, snap
	return table.Loaded{Exists: true, Commit: snap.Version}, nil
}

// Ingested returns the sources whose txn the snapshot holds.
func (a *appender) Ingested(srcs []table.Source) []table.Skipped {
	var out []table.Skipped
	for _, src := range srcs {
		if v, ok := a.read.Txns[TxnAppID(src.Digest)]; ok {
			out = append(out, table.Skipped{Source: src, Commit: &v})
		}
	}
	return out
}

// Columns is the table's geometry, found as the Delta rewrite finds it,
// from the logical schema and the table properties (column names one they
// do not).
func (a *appender) Columns(column string) (spatial.Columns, error) {
	asc, err := a.read.ArrowSchema()
	if err != nil {
		return spatial.Columns{}, err
	}
	return spatial.DiscoverColumns(asc, nil, spatial.Hints{Column: column, Props: a.read.Metadata.Configuration})
}

func (a *appender) Schema() (*arrow.Schema, error) {
	sc, err := a.read.ArrowSchema()
	if err != nil {
		return nil, fmt.Errorf("ingest into %s: %w", a.location, err)
	}
	return sc, nil
}
