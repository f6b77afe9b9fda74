package posdeletes_test

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/maintain/posdeletes"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/table/optval"
)

// morTable generates a merge-on-read table in a fresh warehouse and runs
// deletes against it, each leaving position delete files (or vectors on
// a v3 table).
func morTable(t *testing.T, version int, deletes ...iceberg.BooleanExpression) (catalog.Catalog, string, string) {
	t.Helper()
	wh := t.TempDir()
	cat, err := catalogs.Open(t.Context(), catalogs.Spec{Warehouse: wh})
	require.NoError(t, err)
	cfg := bench.GenerateConfig{Table: "d.t", Rows: 3000, Commits: 3, Seed: 7, FormatVersion: version, PartitionBy: "bucket(2, device_id)",
		Properties: map[string]string{table.WriteDeleteModeKey: table.WriteModeMergeOnRead}}
	_, err = bench.Generate(t.Context(), cat, cfg)
	require.NoError(t, err)
	for _, d := range deletes {
		tbl := load(t, cat)
		_, err := tbl.Delete(t.Context(), d, nil)
		require.NoError(t, err)
	}
	return cat, cfg.Table, wh
}

func idBelow(n int64) iceberg.BooleanExpression { return iceberg.LessThan(iceberg.Reference("id"), n) }

func idsIn(lo, hi int64) iceberg.BooleanExpression {
	return iceberg.NewAnd(iceberg.GreaterThanEqual(iceberg.Reference("id"), lo), iceberg.LessThan(iceberg.Reference("id"), hi))
}

func load(t *testing.T, cat catalog.Catalog) *table.Table {
	t.Helper()
	tbl, err := catalogs.LoadTable(t.Context(), cat, "d.t")
	require.NoError(t, err)
	return tbl
}

// liveIDs reads the table as a reader does, deletes applied.
func liveIDs(t *testing.T, tbl *table.Table) []int64 {
	t.Helper()
	_, recs, err := tbl.Scan(table.WithSelectedFields("id")).ToArrowRecords(t.Context())
	require.NoError(t, err)
	var ids []int64
	for rec, err := range recs {
		require.NoError(t, err)
		col := rec.Column(0)
		for i := range int(rec.NumRows()) {
			ids = append(ids, col.(interface{ Value(int) int64 }).Value(i))
		}
		rec.Release()
	}
	slices.Sort(ids)
	return ids
}

type deleteFiles struct {
	parquet, vectors, equality int
	data                       []string
	vectorTargets              map[string]int
}

func deletesOf(t *testing.T, tbl *table.Table) deleteFiles {
	t.Helper()
	tasks, err := catalogs.PlanFiles(t.Context(), tbl.Scan())
	require.NoError(t, err)
	seen := map[string]bool{}
	d := deleteFiles{vectorTargets: map[string]int{}}
	for _, task := range tasks {
		d.data = append(d.data, task.File.FilePath())
		for _, f := range task.DeleteFiles {
			if !seen[f.FilePath()] {
				seen[f.FilePath()] = true
				d.parquet++
			}
		}
		d.vectors += len(task.DeletionVectorFiles)
		d.vectorTargets[task.File.FilePath()] = len(task.DeletionVectorFiles)
		for _, f := range task.EqualityDeleteFiles {
			if !seen[f.FilePath()] {
				seen[f.FilePath()] = true
				d.equality++
			}
		}
	}
	slices.Sort(d.data)
	return d
}

// files lists the files under the warehouse's data directories.
func files(t *testing.T, wh string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(wh, func(p string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() && strings.Contains(p, string(filepath.Separator)+"data"+string(filepath.Separator)) {
			out = append(out, p)
		}
		return err
	}))
	return out
}

func TestRewriteMergesPositionDeleteFiles(t *testing.T) {
	t.Parallel()
	cat, name, _ := morTable(t, 2, idBelow(10), idsIn(100, 130), idsIn(500, 505), idsIn(1200, 1260), idsIn(2900, 2950))
	tbl := load(t, cat)
	before, ids := deletesOf(t, tbl), liveIDs(t, tbl)
	require.Len(t, ids, 3000-10-30-5-60-50)
	require.Greater(t, before.parquet, 4, "five deletes leave position delete files in both partitions")

	res, err := posdeletes.Rewrite(t.Context(), cat, name, posdeletes.Config{Options: map[string]string{"rewrite-all": "true"}})
	require.NoError(t, err)
	after := load(t, cat)
	got := deletesOf(t, after)
	assert.Equal(t, before.parquet, res.RewrittenDeleteFilesCount)
	assert.Equal(t, 2, res.AddedDeleteFilesCount, "one small file per partition")
	assert.Equal(t, 2, got.parquet)
	assert.Equal(t, int64(155), res.DeletesKept)
	assert.Zero(t, res.DanglingDropped)
	assert.Positive(t, res.RewrittenBytesCount)
	assert.Positive(t, res.AddedBytesCount)
	assert.Equal(t, before.data, got.data, "data files are not touched")
	assert.Equal(t, ids, liveIDs(t, after), "every deleted row stays deleted, no other row is")
	snap := after.CurrentSnapshot()
	assert.Equal(t, table.OpReplace, snap.Summary.Operation)
	assert.Equal(t, res.SnapshotID, snap.SnapshotID)
}

func TestRewriteLeavesLargeEnoughPartitionsAlone(t *testing.T) {
	t.Parallel()
	cat, name, _ := morTable(t, 2, idBelow(10), idsIn(100, 130))
	snap := load(t, cat).CurrentSnapshot().SnapshotID
	res, err := posdeletes.Rewrite(t.Context(), cat, name, posdeletes.Config{})
	require.NoError(t, err)
	assert.Contains(t, res.NoopReason, "min-input-files=5")
	assert.Equal(t, snap, load(t, cat).CurrentSnapshot().SnapshotID, "a no-op commits nothing")

	res, err = posdeletes.Rewrite(t.Context(), cat, name, posdeletes.Config{Options: map[string]string{"min-input-files": "2"}})
	require.NoError(t, err)
	assert.Empty(t, res.NoopReason)
	assert.Positive(t, res.RewrittenDeleteFilesCount)
}

// TestRewriteDropsDanglingDeletes removes a data file that position
// deletes point at: its positions are dropped and the rest kept.
func TestRewriteDropsDanglingDeletes(t *testing.T) {
	t.Parallel()
	cat, name, _ := morTable(t, 2, idBelow(10), idsIn(1200, 1260), idsIn(2900, 2950))
	tbl := load(t, cat)
	tasks, err := catalogs.PlanFiles(t.Context(), tbl.Scan())
	require.NoError(t, err)
	var gone iceberg.DataFile
	for _, task := range tasks {
		if len(task.DeleteFiles) > 0 {
			gone = task.File
			break
		}
	}
	require.NotNil(t, gone)
	tx := tbl.NewTransaction()
	rw := tx.NewRewrite(nil)
	rw.DeleteFile(gone)
	require.NoError(t, rw.Commit(t.Context()))
	tbl, err = tx.Commit(t.Context())
	require.NoError(t, err)
	ids := liveIDs(t, tbl)

	res, err := posdeletes.Rewrite(t.Context(), cat, name, posdeletes.Config{Options: map[string]string{"rewrite-all": "true"}})
	require.NoError(t, err)
	assert.Positive(t, res.DanglingDropped, "the removed file's positions are dropped")
	assert.Equal(t, int64(120), res.DeletesKept+res.DanglingDropped)
	assert.Equal(t, ids, liveIDs(t, load(t, cat)))
}

// TestRewriteTurnsPositionDeletesIntoVectors upgrades a v2 table with
// position delete files to v3, deletes again (a vector, which readers
// take over the position deletes of its data file), and rewrites: only
// vectors are left, one per data file, and readers see the same rows.
func TestRewriteTurnsPositionDeletesIntoVectors(t *testing.T) {
	t.Parallel()
	cat, name, _ := morTable(t, 2, idBelow(10), idsIn(100, 130), idsIn(1200, 1260))
	tx := load(t, cat).NewTransaction()
	require.NoError(t, tx.UpgradeFormatVersion(3))
	_, err := tx.Commit(t.Context())
	require.NoError(t, err)
	_, err = load(t, cat).Delete(t.Context(), idsIn(5, 20), nil)
	require.NoError(t, err)
	tbl := load(t, cat)
	before, ids := deletesOf(t, tbl), liveIDs(t, tbl)
	require.Positive(t, before.parquet)

	res, err := posdeletes.Rewrite(t.Context(), cat, name, posdeletes.Config{})
	require.NoError(t, err, "on v3 every position delete file is converted, whatever the options")
	assert.True(t, res.DeletionVectors)
	after := load(t, cat)
	got := deletesOf(t, after)
	assert.Zero(t, got.parquet, "no position delete file is left")
	assert.Positive(t, got.vectors)
	for f, n := range got.vectorTargets {
		assert.LessOrEqual(t, n, 1, "data file %s has %d vectors", f, n)
	}
	assert.Equal(t, ids, liveIDs(t, after))
	assert.Equal(t, before.vectors+res.AddedDeleteFilesCount, got.vectors, "the vectors already there are kept")
	assert.Positive(t, res.DanglingDropped, "positions a vector supersedes are dropped")
}

func TestRewriteWhereSelectsPartitions(t *testing.T) {
	t.Parallel()
	cat, name, _ := morTable(t, 2, idBelow(10), idsIn(100, 130), idsIn(500, 505), idsIn(1200, 1260), idsIn(2900, 2950))
	tbl := load(t, cat)
	before, ids := deletesOf(t, tbl), liveIDs(t, tbl)
	_, recs, err := tbl.Scan(table.WithSelectedFields("device_id"), table.WithLimit(1)).ToArrowRecords(t.Context())
	require.NoError(t, err)
	var device string
	for rec, err := range recs {
		require.NoError(t, err)
		device = rec.Column(0).ValueStr(0)
		rec.Release()
	}
	res, err := posdeletes.Rewrite(t.Context(), cat, name, posdeletes.Config{Where: "device_id = " + device, Options: map[string]string{"rewrite-all": "true"}})
	require.NoError(t, err)
	assert.Equal(t, 1, res.Groups, "one partition holds device %s", device)
	assert.Less(t, res.RewrittenDeleteFilesCount, before.parquet)
	assert.Equal(t, ids, liveIDs(t, load(t, cat)))
}

func TestRewriteRefusesBadInputByName(t *testing.T) {
	t.Parallel()
	cat, name, wh := morTable(t, 2, idBelow(10), idsIn(100, 130))
	snap := load(t, cat).CurrentSnapshot().SnapshotID
	list := files(t, wh)
	for _, tc := range []struct {
		opts  map[string]string
		where string
		want  string
	}{
		{opts: map[string]string{"min-input-file": "2"}, want: `unknown option "min-input-file"`},
		{opts: map[string]string{"delete-file-threshold": "2"}, want: `unknown option "delete-file-threshold"`},
		{opts: map[string]string{"target-file-size-bytes": "-1"}, want: "target-file-size-bytes"},
		{opts: map[string]string{"rewrite-job-order": "sideways"}, want: "rewrite-job-order"},
		{opts: map[string]string{"min-file-size-bytes": "10MiB", "target-file-size-bytes": "1MiB"}, want: "min-file-size-bytes"},
		{where: "no_such_column = 1", want: "no_such_column"},
	} {
		_, err := posdeletes.Rewrite(t.Context(), cat, name, posdeletes.Config{Options: tc.opts, Where: tc.where})
		require.Error(t, err, "%v %q", tc.opts, tc.where)
		assert.Contains(t, err.Error(), tc.want)
		if tc.opts != nil {
			assert.ErrorIs(t, err, optval.ErrBad)
		}
	}
	assert.Equal(t, snap, load(t, cat).CurrentSnapshot().SnapshotID)
	assert.Equal(t, list, files(t, wh), "nothing written")
}

func TestRewriteDryRunWritesNothing(t *testing.T) {
	t.Parallel()
	cat, name, wh := morTable(t, 2, idBelow(10), idsIn(100, 130), idsIn(1200, 1260))
	snap := load(t, cat).CurrentSnapshot().SnapshotID
	list := files(t, wh)
	res, err := posdeletes.Rewrite(t.Context(), cat, name, posdeletes.Config{DryRun: true, Options: map[string]string{"rewrite-all": "true"}})
	require.NoError(t, err)
	assert.True(t, res.DryRun)
	assert.Equal(t, deletesOf(t, load(t, cat)).parquet, res.RewrittenDeleteFilesCount)
	assert.Equal(t, snap, load(t, cat).CurrentSnapshot().SnapshotID)
	assert.Equal(t, list, files(t, wh))
}

// TestRewriteLosesToConcurrentDeleteFileRemoval has a second writer drop
// a delete file being rewritten before the commit: exit with a conflict,
// nothing committed, the new files deleted.
func TestRewriteLosesToConcurrentDeleteFileRemoval(t *testing.T) {
	t.Parallel()
	cat, name, wh := morTable(t, 2, idBelow(10), idsIn(100, 130), idsIn(1200, 1260))
	list := files(t, wh)
	var snap int64
	cfg := posdeletes.Config{Options: map[string]string{"rewrite-all": "true"}, BeforeCommit: func(context.Context) {
		ctx := t.Context()
		tbl := load(t, cat)
		tasks, err := catalogs.PlanFiles(ctx, tbl.Scan())
		require.NoError(t, err)
		for _, task := range tasks {
			if len(task.DeleteFiles) > 0 {
				tx := tbl.NewTransaction()
				rw := tx.NewRewrite(nil)
				rw.DeleteFile(task.DeleteFiles[0])
				require.NoError(t, rw.Commit(ctx))
				tbl, err = tx.Commit(ctx)
				require.NoError(t, err)
				snap = tbl.CurrentSnapshot().SnapshotID
				return
			}
		}
	}}
	_, err := posdeletes.Rewrite(t.Context(), cat, name, cfg)
	require.ErrorIs(t, err, catalogs.ErrConflict)
	assert.Equal(t, snap, load(t, cat).CurrentSnapshot().SnapshotID, "nothing committed after the second writer")
	assert.Equal(t, list, files(t, wh), "the new delete files are deleted")
}

// TestRewriteKeepsConcurrentDeletes has a second writer delete more rows
// before the commit: its delete files stay, and every row it deleted
// stays deleted.
func TestRewriteKeepsConcurrentDeletes(t *testing.T) {
	t.Parallel()
	cat, name, _ := morTable(t, 2, idBelow(10), idsIn(100, 130), idsIn(1200, 1260))
	once := false
	cfg := posdeletes.Config{Options: map[string]string{"rewrite-all": "true"}, BeforeCommit: func(context.Context) {
		ctx := t.Context()
		if once {
			return
		}
		once = true
		_, err := load(t, cat).Delete(ctx, idsIn(2000, 2100), nil)
		require.NoError(t, err)
	}}
	_, err := posdeletes.Rewrite(t.Context(), cat, name, cfg)
	require.NoError(t, err)
	ids := liveIDs(t, load(t, cat))
	assert.Len(t, ids, 3000-10-30-60-100)
	for _, id := range ids {
		if id >= 2000 && id < 2100 {
			t.Fatalf("id %d deleted by the second writer is back", id)
		}
	}
}

func TestRewriteCancelledLeavesNoFiles(t *testing.T) {
	t.Parallel()
	cat, name, wh := morTable(t, 2, idBelow(10), idsIn(100, 130), idsIn(1200, 1260))
	snap := load(t, cat).CurrentSnapshot().SnapshotID
	list := files(t, wh)
	ctx, cancel := context.WithCancel(t.Context())
	_, err := posdeletes.Rewrite(ctx, cat, name, posdeletes.Config{Options: map[string]string{"rewrite-all": "true"},
		BeforeCommit: func(context.Context) { cancel() }})
	require.True(t, errors.Is(err, context.Canceled), "%v", err)
	assert.Equal(t, snap, load(t, cat).CurrentSnapshot().SnapshotID)
	assert.Equal(t, list, files(t, wh))
}

// TestRewriteKeepsFileGranularity writes one delete file per data file
// when the table asks for file-scoped deletes, as Iceberg's writers do.
func TestRewriteKeepsFileGranularity(t *testing.T) {
	t.Parallel()
	cat, name, _ := morTable(t, 2, idBelow(10), idsIn(100, 130), idsIn(1200, 1260), idsIn(2900, 2950))
	tx := load(t, cat).NewTransaction()
	require.NoError(t, tx.SetProperties(iceberg.Properties{posdeletes.GranularityProperty: "file"}))
	_, err := tx.Commit(t.Context())
	require.NoError(t, err)
	tbl := load(t, cat)
	ids := liveIDs(t, tbl)
	tasks, err := catalogs.PlanFiles(t.Context(), tbl.Scan())
	require.NoError(t, err)
	withDeletes := 0
	for _, task := range tasks {
		if len(task.DeleteFiles) > 0 {
			withDeletes++
		}
	}
	res, err := posdeletes.Rewrite(t.Context(), cat, name, posdeletes.Config{Options: map[string]string{"rewrite-all": "true"}})
	require.NoError(t, err)
	assert.Equal(t, withDeletes, res.AddedDeleteFilesCount, "one delete file per data file with deletes")
	tasks, err = catalogs.PlanFiles(t.Context(), load(t, cat).Scan())
	require.NoError(t, err)
	for _, task := range tasks {
		for _, d := range task.DeleteFiles {
			// A v2 manifest has no referenced_data_file: the file_path
			// bounds, kept whole, scope the file to its data file.
			lo, hi := d.LowerBoundValues()[2147483546], d.UpperBoundValues()[2147483546]
			assert.Equal(t, task.File.FilePath(), string(lo), "a file-scoped delete file's bounds name its data file")
			assert.Equal(t, string(lo), string(hi))
		}
	}
	assert.Equal(t, ids, liveIDs(t, load(t, cat)))
}
