package ingest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	format "github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/table/geowrite"
)

// commit writes batches as data files of the table and appends them in one
// snapshot, retrying lost races on a fresh base. Files of a commit that
// definitely failed are deleted, so a refused or lost ingest leaves nothing
// behind. It returns the new snapshot's id.
func (in *ingester) commit(ctx context.Context, batches *conformStream) (int64, error) {
	ctx, written := catalogs.TrackFiles(ctx)
	snapID, err := in.commitTracked(ctx, batches)
	if err != nil && catalogs.FailedWrite(err) {
		in.removeUncommitted(context.WithoutCancel(ctx), written.Paths())
	}
	return snapID, err
}

// removeUncommitted deletes the files of a failed ingest, its manifests,
// manifest lists and metadata files included, unless the table's
// metadata shows one of its manifest lists committed.
func (in *ingester) removeUncommitted(ctx context.Context, paths []string) {
	if len(paths) == 0 {
		return
	}
	tbl, err := catalogs.LoadTable(ctx, in.cat, in.cfg.Table)
	if err != nil {
		in.log.Warn("remove written files", "table", in.cfg.Table, "error", err)
		return
	}
	for _, s := range tbl.Metadata().Snapshots() {
		if slices.Contains(paths, s.ManifestList) {
			return
		}
	}
	in.removePaths(ctx, tbl, paths)
}

func (in *ingester) commitTracked(ctx context.Context, batches *conformStream) (int64, error) {
	tbl, err := catalogs.LoadTable(ctx, in.cat, in.cfg.Table)
	if err != nil {
		return 0, err
	}
	if tbl.Metadata().Version() >= 3 {
		// v3 data files need first_row_id from the head they commit on,
		// so each attempt writes through tx.Append.
		return in.appendV3(ctx, batches)
	}
	files, err := in.write(ctx, tbl, batches)
	if err != nil {
		return 0, err
	}
	snapID, err := in.withRetry(ctx, func(ctx context.Context, _ *table.Table, tx *table.Transaction) error {
		if err := tx.AddDataFiles(ctx, files, in.snapshotProps(), table.WithoutAutoNameMapping()); err != nil {
			return fmt.Errorf("add data files: %w", err)
		}
		return nil
	})
	_, dup := errors.AsType[*duplicateError](err)
	canceled := errors.Is(err, context.Canceled) && !catalogs.OutcomeUnknown(err)
	if dup || canceled || catalogs.NothingCommitted(err) {
		// The catalog refused the commit, or it was not asked: the files
		// are referenced by no snapshot and are ours to delete. A commit
		// whose outcome is unknown keeps them.
		in.removeFiles(context.WithoutCancel(ctx), tbl, files)
	}
	return snapID, err
}

// write writes batches as GeoParquet data files of tbl. On an error it
// deletes every file it created, those a failed write (a full disk, an
// I/O error) left part-written included.
func (in *ingester) write(ctx context.Context, tbl *table.Table, batches *conformStream) ([]iceberg.DataFile, error) {
	var files []iceberg.DataFile
	roots := format.IcebergRoots(tbl.Location(), tbl.Properties())
	wctx, created := format.Track(format.WithWriteScope(ctx, roots...))
	fail := func(err error) ([]iceberg.DataFile, error) {
		in.removePaths(context.WithoutCancel(ctx), tbl, created.Paths())
		return nil, err
	}
	for df, err := range geowrite.Records(wctx, tbl, batches.schema, batches.all()) {
		if err != nil {
			if ce, ok := errors.AsType[*ConformError](err); ok {
				return fail(ce)
			}
			return fail(fmt.Errorf("write data files: %w", err))
		}
		files = append(files, df)
	}
	group := format.GateGroup{Read: batches.rows, Files: format.GateFiles(files)}
	if tamperGate != nil {
		tamperGate(&group)
	}
	gate := format.Gate{Op: "ingest", Table: in.cfg.Table, Roots: roots}
	if err := gate.Check([]format.GateGroup{group}); err != nil {
		return fail(err)
	}
	in.wrote = batches.rows
	return files, nil
}

// tamperGate, set by tests, alters what the commit gate is shown.
var tamperGate func(*format.GateGroup)

// appendV3 appends batches to a v3 table in one snapshot, retrying lost
// races. Row lineage ties data files to the head they commit on, so every
// attempt writes its files anew; iceberg-go replays its own retries
// (commit.retry.num-retries) with the files already written. An attempt
// the catalog refused deletes its files (see withRetry); files of one
// whose outcome is unknown stay for orphan cleanup.
func (in *ingester) appendV3(ctx context.Context, batches *conformStream) (int64, error) {
	return in.withRetry(ctx, func(ctx context.Context, cur *table.Table, tx *table.Transaction) error {
		files, err := in.write(ctx, cur, batches)
		if err != nil {
			return err
		}
		if files, err = geowrite.FirstRowIDs(cur.Metadata(), files); err != nil {
			return err
		}
		if err := tx.AddDataFiles(ctx, files, in.snapshotProps(), table.WithoutAutoNameMapping()); err != nil {
			return fmt.Errorf("append: %w", err)
		}
		return nil
	})
}

// withRetry runs stage on a transaction over a fresh load of the table
// (cur) and commits it, retrying lost races (catalogs.CommitRetried: a
// refused try deletes the files it wrote); it returns the new snapshot's
// id.
func (in *ingester) withRetry(ctx context.Context, stage func(ctx context.Context, cur *table.Table, tx *table.Transaction) error) (int64, error) {
	var snapID int64
	err := catalogs.CommitRetried(ctx, in.cat, in.cfg.Table, in.cfg.CommitRetries, func(ctx context.Context) (*table.Table, error) {
		cur, err := catalogs.LoadTable(ctx, in.cat, in.cfg.Table)
		if err != nil {
			return nil, err
		}
		tx := cur.NewTransaction()
		if err := stage(ctx, cur, tx); err != nil {
			return nil, err
		}
		after, err := tx.Commit(ctx)
		if err != nil {
			return nil, err
		}
		snapID = after.CurrentSnapshot().SnapshotID
		return after, nil
	})
	return snapID, err
}

func (in *ingester) snapshotProps() iceberg.Properties {
	return iceberg.Properties{
		"geocompact.operation": "ingest",
		FilesKey:               strconv.Itoa(len(in.cfg.Files)),
		SourcesKey:             sourcesSummary(in.sources),
	}
}

// removeFiles deletes data files this ingest wrote, logging failures: an
// undeleted file is an orphan that orphan cleanup removes later.
func (in *ingester) removeFiles(ctx context.Context, tbl *table.Table, files []iceberg.DataFile) {
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = f.FilePath()
	}
	in.removePaths(ctx, tbl, paths)
}

// removePaths deletes files this ingest wrote, as removeFiles does.
func (in *ingester) removePaths(ctx context.Context, tbl *table.Table, paths []string) {
	geowrite.RemoveWritten(ctx, tbl, paths, in.log.With("table", in.cfg.Table))
}
