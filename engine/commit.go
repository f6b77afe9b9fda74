package engine

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/geocompact/geocompact/engine/catalogs"
)

// ErrConflict marks a commit that lost to a concurrent writer and could not
// be replayed within the retry budget, or found the files it replaces
// changed. The table is unchanged; the operation is safe to run again. The
// CLI exits 4 on it. It is catalogs.ErrConflict, which
// catalogs.WithCommitRetry returns when its budget is spent.
var ErrConflict = catalogs.ErrConflict

// errDiverged reports that files this rewrite replaces changed under it.
func errDiverged(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrConflict, fmt.Sprintf(format, args...))
}

// commit commits the groups' outputs through the table's format, after
// reporting the phase.
func (ex *execution) commit(ctx context.Context, outs []*groupOut) (id int64, removedDeletes int, err error) {
	ex.progress(-1, "committing", 0, 0)
	id, removedDeletes, err = ex.tf.Commit(ctx, replacements(outs), ex.r.summary(len(outs)))
	if err == nil {
		ex.r.log.Info("rewrite committed", "snapshot_id", id, "groups", len(outs))
	}
	return id, removedDeletes, err
}

// commit replaces the groups' input files with their outputs in one
// replace snapshot, on a fresh load of the table, retrying when another
// writer committed first. It fails with ErrConflict, without retrying,
// when a file it replaces is gone or has gained delete files since it was
// read: committing then would lose those deletes. It returns the new
// snapshot's id and how many delete files it dropped with the files they
// applied to.
func (t *icebergFormat) Commit(ctx context.Context, groups []Replacement, summary map[string]string) (id int64, removedDeletes int, err error) {
	err = catalogs.WithCommitRetry(ctx, t.retries, func(ctx context.Context) error {
		if testHookBeforeCommit != nil {
			testHookBeforeCommit(ctx)
		}
		tbl, err := t.cat.LoadTable(ctx, t.tbl.Identifier())
		if err != nil {
			return fmt.Errorf("reload %s: %w", t.name, err)
		}
		removable, err := t.checkBase(ctx, tbl, groups)
		if err != nil {
			return err
		}
		tx := tbl.NewTransaction()
		rw := tx.NewRewrite(summary)
		for _, g := range groups {
			for _, f := range g.Files {
				rw.DeleteFile(task(f).File)
			}
			for _, f := range dataFiles(g.New) {
				rw.AddDataFile(f)
			}
		}
		for _, d := range removable {
			rw.DeleteFile(d)
		}
		if err := rw.Commit(ctx); err != nil {
			return fmt.Errorf("stage rewrite of %s: %w", t.name, err)
		}
		nt, err := tx.Commit(ctx)
		if err != nil {
			return fmt.Errorf("commit rewrite of %s: %w", t.name, err)
		}
		id = nt.CurrentSnapshot().SnapshotID
		removedDeletes = len(removable)
		return nil
	})
	return id, removedDeletes, err
}

// checkBase checks that every file the groups replace is still live in
// tbl with exactly the delete files that were applied when it was read,
// and returns the delete files that apply only to replaced files (safe to
// drop with them).
func (t *icebergFormat) checkBase(ctx context.Context, tbl *table.Table, groups []Replacement) ([]iceberg.DataFile, error) {
	if tbl.CurrentSnapshot() == nil {
		return nil, errDiverged("the table has no current snapshot any more")
	}
	tasks := t.all
	if tbl.CurrentSnapshot().SnapshotID != t.snapshotID {
		var err error
		if tasks, err = tbl.Scan().PlanFiles(ctx); err != nil {
			return nil, fmt.Errorf("plan files of %s: %w", t.name, err)
		}
	}
	live := make(map[string]*table.FileScanTask, len(tasks))
	for i := range tasks {
		live[tasks[i].File.FilePath()] = &tasks[i]
	}
	replaced := map[string]bool{}
	for _, g := range groups {
		for _, f := range g.Files {
			task := task(f)
			replaced[task.File.FilePath()] = true
			cur, ok := live[task.File.FilePath()]
			if !ok {
				return nil, errDiverged("data file %s was removed by a concurrent commit (another rewrite or a delete); nothing was committed, run the rewrite again", task.File.FilePath())
			}
			if !slices.Equal(deletePaths(cur), deletePaths(&task)) {
				return nil, errDiverged("data file %s gained delete files from a concurrent commit; nothing was committed, run the rewrite again", task.File.FilePath())
			}
		}
	}
	// A delete file may go when every live data file it applies to is
	// being replaced.
	users := map[string][]string{}
	files := map[string]iceberg.DataFile{}
	for _, tk := range tasks {
		for _, d := range taskDeletes(&tk) {
			users[d.FilePath()] = append(users[d.FilePath()], tk.File.FilePath())
			files[d.FilePath()] = d
		}
	}
	var removable []iceberg.DataFile
	for _, p := range slices.Sorted(maps.Keys(users)) {
		if !slices.ContainsFunc(users[p], func(u string) bool { return !replaced[u] }) {
			removable = append(removable, files[p])
		}
	}
	return removable, nil
}

func taskDeletes(t *table.FileScanTask) []iceberg.DataFile {
	return slices.Concat(t.DeleteFiles, t.EqualityDeleteFiles, t.DeletionVectorFiles)
}

func deletePaths(t *table.FileScanTask) []string {
	var ps []string
	for _, d := range taskDeletes(t) {
		ps = append(ps, d.FilePath())
	}
	slices.Sort(ps)
	return ps
}
