package icebergtable

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
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
func (a *icebergAppender) commit(ctx context.Context, req format.AppendRequest, sc *arrow.Schema) (int64, error) {
	a.retries = req.CommitRetries
	batches := &sourceStream{ctx: ctx, req: req, sources: a.sources, schema: sc}
	ctx, written := catalogs.TrackFiles(ctx)
	snapID, err := a.commitTracked(ctx, batches)
	if err != nil && catalogs.FailedWrite(err) {
		a.removeUncommitted(context.WithoutCancel(ctx), written.Paths())
	}
	return snapID, err
}

// removeUncommitted deletes the files of a failed ingest, its manifests,
// manifest lists and metadata files included, unless the table's
// metadata shows one of its manifest lists committed.
func (a *icebergAppender) removeUncommitted(ctx context.Context, paths []string) {
	if len(paths) == 0 {
		return
	}
	tbl, err := catalogs.LoadTable(ctx, a.cat, a.name)
	if err != nil {
		a.log.Warn("remove written files", "table", a.name, "error", err)
		return
	}
	for _, s := range tbl.Metadata().Snapshots() {
		if slices.Contains(paths, s.ManifestList) {
			return
		}
	}
	a.removePaths(ctx, tbl, paths)
}

func (a *icebergAppender) commitTracked(ctx context.Context, batches *sourceStream) (int64, error) {
	tbl, err := catalogs.LoadTable(ctx, a.cat, a.name)
	if err != nil {
		return 0, err
	}
	if tbl.Metadata().Version() >= 3 {
		// v3 data files need first_row_id from the head they commit on,
		// so each attempt writes through tx.Append.
		return a.appendV3(ctx, batches)
	}
	files, err := a.write(ctx, tbl, batches)
	if err != nil {
		return 0, err
	}
	snapID, err := a.withRetry(ctx, func(ctx context.Context, _ *table.Table, tx *table.Transaction) error {
		if err := tx.AddDataFiles(ctx, files, a.snapshotProps(), table.WithoutAutoNameMapping()); err != nil {
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
		a.removeFiles(context.WithoutCancel(ctx), tbl, files)
	}
	return snapID, err
}

// write writes batches as GeoParquet data files of tbl. On an error it
// deletes every file it created, those a failed write (a full disk, an
// I/O error) left part-written included.
func (a *icebergAppender) write(ctx context.Context, tbl *table.Table, batches *sourceStream) ([]iceberg.DataFile, error) {
	var files []iceberg.DataFile
	roots := format.IcebergRoots(tbl.Location(), tbl.Properties())
	wctx, created := format.Track(format.WithWriteScope(ctx, roots...))
	fail := func(err error) ([]iceberg.DataFile, error) {
		a.removePaths(context.WithoutCancel(ctx), tbl, created.Paths())
		return nil, err
	}
	for df, err := range geowrite.Records(wctx, tbl, batches.schema, batches.all()) {
		if err != nil {
			// A source that does not fit the table fails here too: ingest
			// finds it in the chain and words it.
			return fail(fmt.Errorf("write data files: %w", err))
		}
		files = append(files, df)
	}
	group := format.GateGroup{Read: batches.rows, Files: format.GateFiles(files)}
	if tamperGate != nil {
		tamperGate(&group)
	}
	gate := format.Gate{Op: "ingest", Table: a.name, Roots: roots}
	if err := gate.Check([]format.GateGroup{group}); err != nil {
		return fail(err)
	}
	a.wrote, a.dataFiles = batches.rows, len(files)
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
func (a *icebergAppender) appendV3(ctx context.Context, batches *sourceStream) (int64, error) {
	return a.withRetry(ctx, func(ctx context.Context, cur *table.Table, tx *table.Transaction) error {
		files, err := a.write(ctx, cur, batches)
		if err != nil {
			return err
		}
		if files, err = geowrite.FirstRowIDs(cur.Metadata(), files); err != nil {
			return err
		}
		if err := tx.AddDataFiles(ctx, files, a.snapshotProps(), table.WithoutAutoNameMapping()); err != nil {
			return fmt.Errorf("append: %w", err)
		}
		return nil
	})
}

// withRetry runs stage on a transaction over a fresh load of the table
// (cur) and commits it, retrying lost races (catalogs.CommitRetried: a
// refused try deletes the files it wrote); it returns the new snapshot's
// id.
func (a *icebergAppender) withRetry(ctx context.Context, stage func(ctx context.Context, cur *table.Table, tx *table.Transaction) error) (int64, error) {
	var snapID int64
	err := catalogs.CommitRetried(ctx, a.cat, a.name, a.retries, func(ctx context.Context) (*table.Table, error) {
		cur, err := catalogs.LoadTable(ctx, a.cat, a.name)
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

func (a *icebergAppender) snapshotProps() iceberg.Properties {
	return iceberg.Properties{
		"geocompact.operation": "ingest",
		FilesKey:               strconv.Itoa(len(a.sources)),
		SourcesKey:             sourcesSummary(a.sources),
	}
}

// removeFiles deletes data files this ingest wrote, logging failures: an
// undeleted file is an orphan that orphan cleanup removes later.
func (a *icebergAppender) removeFiles(ctx context.Context, tbl *table.Table, files []iceberg.DataFile) {
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = f.FilePath()
	}
	a.removePaths(ctx, tbl, paths)
}

// removePaths deletes files this ingest wrote, as removeFiles does.
func (a *icebergAppender) removePaths(ctx context.Context, tbl *table.Table, paths []string) {
	geowrite.RemoveWritten(ctx, tbl, paths, a.log.With("table", a.name))
}

// sourceStream yields the sources' rows, conformed to schema, as one
// stream of batches for the Iceberg writer. The consumer releases each
// batch it takes; a batch it refuses is released here. Each pass reads
// the files again.
type sourceStream struct {
	ctx     context.Context
	req     format.AppendRequest
	sources []format.Source
	schema  *arrow.Schema
	// rows is the row count of the last complete pass.
	rows int64
}

func (s *sourceStream) all() iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		var rows int64
		for _, src := range s.sources {
			stopped := false
			err := s.req.Rows(s.ctx, src, s.schema, func(rec arrow.RecordBatch) error {
				rows += rec.NumRows()
				rec.Retain()
				if !yield(rec, nil) {
					rec.Release()
					stopped = true
					return errStopRows
				}
				return nil
			})
			if stopped {
				return
			}
			if err != nil {
				yield(nil, err)
				return
			}
		}
		s.rows = rows
	}
}

// errStopRows ends a source's rows early without an error.
var errStopRows = errors.New("stop reading")
