package bench

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// ArrivalSource says where the order of the Unsorted layout's rows came
// from.
type ArrivalSource string

const (
	// ArrivalHistory: the rows of the data files that append snapshots
	// added, in the order they were committed (data sequence number, then
	// position in the snapshot's manifests), read from the snapshot
	// history. Rewrites (replace snapshots) move rows without changing
	// their arrival, so this is the arrival order whatever the current
	// layout, as long as the history and its files are kept.
	ArrivalHistory ArrivalSource = "history"
	// ArrivalFiles: the current data files in data sequence number order.
	// Used when the history cannot give the arrival order (expired
	// snapshots, deleted files, or a commit that deleted rows); after a
	// rewrite it is the rewrite's order, not the arrival order.
	ArrivalFiles ArrivalSource = "current_files"
)

// arrivalTasks returns the scan tasks whose rows, read in order, are
// tbl's current rows in arrival order, and where that order came from.
// current are the current snapshot's tasks; they are the fallback.
func arrivalTasks(ctx context.Context, tbl *table.Table, current []table.FileScanTask) ([]table.FileScanTask, ArrivalSource, error) {
	tasks, ok, err := historyTasks(ctx, tbl, current)
	if err != nil {
		return nil, "", err
	}
	if ok {
		return tasks, ArrivalHistory, nil
	}
	tasks = slices.Clone(current)
	if err := arrivalOrder(ctx, tbl, tasks); err != nil {
		return nil, "", err
	}
	return tasks, ArrivalFiles, nil
}

// historyTasks walks the current snapshot's ancestry and returns the
// files its append snapshots added, in commit order. It reports false
// when that cannot stand for the current rows: an ancestor is missing
// (expired), a snapshot did anything but append or replace (a delete or
// overwrite may have removed rows), a file is gone, a current file
// carries deletes, or the row counts differ.
func historyTasks(ctx context.Context, tbl *table.Table, current []table.FileScanTask) ([]table.FileScanTask, bool, error) {
	var rows int64
	for _, t := range current {
		if len(t.DeleteFiles)+len(t.EqualityDeleteFiles)+len(t.DeletionVectorFiles) > 0 {
			return nil, false, nil
		}
		rows += t.File.Count()
	}
	var chain []*table.Snapshot
	for s := tbl.CurrentSnapshot(); s != nil; {
		chain = append(chain, s)
		if s.ParentSnapshotID == nil {
			break
		}
		if s = tbl.Metadata().SnapshotByID(*s.ParentSnapshotID); s == nil {
			return nil, false, nil // expired
		}
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, false, err
	}
	type added struct {
		df       iceberg.DataFile
		seq, pos int64
	}
	var files []added
	for _, s := range chain {
		if s.Summary == nil || (s.Summary.Operation != table.OpAppend && s.Summary.Operation != table.OpReplace) {
			return nil, false, nil
		}
		if s.Summary.Operation == table.OpReplace {
			continue
		}
		manifests, err := s.Manifests(fs)
		if err != nil {
			return nil, false, fmt.Errorf("list manifests of snapshot %d: %w", s.SnapshotID, err)
		}
		for _, m := range manifests {
			if m.ManifestContent() != iceberg.ManifestContentData || m.SnapshotID() != s.SnapshotID {
				continue
			}
			entries, err := m.FetchEntries(fs, true)
			if err != nil {
				return nil, false, fmt.Errorf("read manifest %s: %w", m.FilePath(), err)
			}
			for _, e := range entries {
				if e.Status() == iceberg.EntryStatusADDED && e.SnapshotID() == s.SnapshotID {
					files = append(files, added{e.DataFile(), s.SequenceNumber, int64(len(files))})
				}
			}
		}
	}
	slices.SortStableFunc(files, func(a, b added) int { return cmp.Or(cmp.Compare(a.seq, b.seq), cmp.Compare(a.pos, b.pos)) })
	var total int64
	tasks := make([]table.FileScanTask, len(files))
	for i, f := range files {
		total += f.df.Count()
		if r, err := fs.Open(f.df.FilePath()); err != nil {
			return nil, false, nil // cleaned up since
		} else {
			r.Close()
		}
		tasks[i] = table.FileScanTask{File: f.df, Start: 0, Length: f.df.FileSizeBytes()}
	}
	return tasks, total == rows, nil
}
