package job_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/cluster"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/engine/verify"
	"github.com/geocompact/geocompact/internal/testing/icebergtest"
	"github.com/geocompact/geocompact/job"
	"github.com/geocompact/geocompact/spatial"
	format "github.com/geocompact/geocompact/table"
)

// runJob runs a job's pieces in this process the way a distributed
// engine runs them: the job and the file descriptions travel as bytes,
// every file is scattered on its own, buckets are written from their
// rows in input order, and spanning files from the fragments in bucket
// order; whole groups are rewritten in one piece. fail, when set, fails
// the first bucket or whole group after it is written.
func runJob(t *testing.T, cat catalog.Catalog, name string, cfg engine.Request, fail bool) (*job.Rewrite, *engine.Result, error) {
	t.Helper()
	ctx := t.Context()
	driver, err := job.Prepare(ctx, cat, name, cfg)
	require.NoError(t, err)
	b, err := json.Marshal(driver)
	require.NoError(t, err)
	var worker job.Rewrite
	require.NoError(t, json.Unmarshal(b, &worker))
	require.NoError(t, worker.Open(ctx, cat))

	n := len(worker.Groups)
	files := make([][]iceberg.DataFile, n)
	in, out := make([]verify.Digest, n), make([]verify.Digest, n)
	for gi, g := range worker.Groups {
		in[gi], out[gi] = verify.NewDigest(), verify.NewDigest()
		if g.Whole {
			fs, din, dout, err := worker.RewriteGroup(ctx, gi)
			if err == nil && fail {
				err = errors.New("injected group failure")
			}
			if err != nil {
				_, aerr := driver.Abort(context.WithoutCancel(ctx), cat)
				require.NoError(t, aerr)
				return driver, nil, err
			}
			files[gi] = travel(t, &worker, fs)
			in[gi].Merge(din)
			out[gi].Merge(dout)
			continue
		}
		buckets := make([][]arrow.RecordBatch, g.Buckets)
		var cells cluster.Cells
		for _, p := range g.Files {
			d, fc, err := worker.ScatterFile(ctx, gi, p, func(bk int, rec arrow.RecordBatch) error {
				buckets[bk] = append(buckets[bk], rec)
				return nil
			})
			require.NoError(t, err)
			in[gi].Merge(d)
			require.Equal(t, g.CutShift != 0, fc != nil, "cells are counted for a group cut at cells only")
			for _, c := range fc {
				if cells == nil {
					cells = cluster.Cells{}
				}
				cells.Add(c)
			}
		}
		var total int64
		counts := make([]int64, len(buckets))
		for bk, recs := range buckets {
			for _, r := range recs {
				counts[bk] += r.NumRows()
			}
			total += counts[bk]
		}
		frags := map[int][]arrow.RecordBatch{}
		var first int64
		for bk, recs := range buckets {
			if len(recs) == 0 {
				continue
			}
			res, err := worker.WriteBucket(ctx, gi, bk, first, total, cells, recs)
			if err == nil && fail {
				err = errors.New("injected bucket failure")
			}
			if err != nil {
				_, aerr := driver.Abort(context.WithoutCancel(ctx), cat)
				require.NoError(t, aerr)
				return driver, nil, err
			}
			first += counts[bk]
			files[gi] = append(files[gi], travel(t, &worker, res.Files)...)
			out[gi].Merge(res.Out)
			for _, f := range res.Fragments {
				frags[f.File] = append(frags[f.File], f.Rows)
			}
		}
		for _, k := range slices.Sorted(maps.Keys(frags)) {
			fs, d, err := worker.WriteSpanning(ctx, gi, k, frags[k])
			require.NoError(t, err)
			files[gi] = append(files[gi], travel(t, &worker, fs)...)
			out[gi].Merge(d)
		}
	}
	var committer job.Rewrite
	require.NoError(t, json.Unmarshal(b, &committer))
	res, err := committer.Commit(ctx, cat, files, in, out)
	return driver, res, err
}

// travel sends data file descriptions through their wire form and checks
// nothing the commit needs is lost.
func travel(t *testing.T, j *job.Rewrite, files []iceberg.DataFile) []iceberg.DataFile {
	t.Helper()
	if len(files) == 0 {
		return nil
	}
	b, err := j.EncodeFiles(files)
	require.NoError(t, err)
	back, err := job.DecodeFiles(b)
	require.NoError(t, err)
	require.Len(t, back, len(files))
	for i, f := range files {
		g := back[i]
		assert.Equal(t, f.FilePath(), g.FilePath())
		assert.Equal(t, f.Count(), g.Count())
		assert.Equal(t, f.FileSizeBytes(), g.FileSizeBytes())
		assert.Equal(t, f.Partition(), g.Partition())
		assert.Equal(t, f.LowerBoundValues(), g.LowerBoundValues())
		assert.Equal(t, f.UpperBoundValues(), g.UpperBoundValues())
		assert.Equal(t, f.NullValueCounts(), g.NullValueCounts())
		assert.Equal(t, f.SpecID(), g.SpecID())
	}
	return back
}

// bandWindows are tall, narrow query windows across the world: kd splits
// for them across x, unlike for its default windows.
func bandWindows() []cluster.WindowSet {
	ws := make([]spatial.Bound, 200)
	for i := range ws {
		x := -180 + 1.8*float64(i)
		ws[i] = spatial.Bound{MinX: x, MinY: -90, MaxX: x + 0.5, MaxY: 90}
	}
	return []cluster.WindowSet{{Name: "bands", Windows: ws}}
}

// TestJobMatchesRewrite checks that a rewrite run as a job's pieces
// writes exactly the files the local engine writes: the same rows in the
// same order in the same files, sorted and binpacked, partitioned, with
// merge-on-read deletes, with one bucket per group or many.
func TestJobMatchesRewrite(t *testing.T) {
	t.Parallel()
	deleteSome := func(tbl *table.Table) {
		_, err := tbl.Delete(t.Context(), iceberg.LessThan(iceberg.Reference("id"), int64(700)), nil)
		require.NoError(t, err)
	}
	mor := map[string]string{"write.delete.mode": "merge-on-read"}
	base := []string{"rewrite-all", "true", "target-file-size-bytes", "65536"}
	cases := []struct {
		name    string
		gen     bench.GenerateConfig
		prepare func(*table.Table)
		cfg     engine.Request
	}{
		{"hilbert-partitioned", bench.GenerateConfig{Rows: 12000, Commits: 8, PartitionBy: "day(ts)"}, nil,
			engine.Request{Curve: "hilbert", Options: icebergtest.Opts(base...)}},
		{"hilbert-buckets", bench.GenerateConfig{Rows: 15000, Commits: 10, Distribution: bench.Clustered}, nil,
			engine.Request{Curve: "hilbert", Options: icebergtest.Opts(append(base, "max-group-memory-bytes", icebergtest.SpillBudget)...)}},
		{"zorder-deletes", bench.GenerateConfig{Rows: 12000, Commits: 8, Properties: mor}, deleteSome,
			engine.Request{Curve: "zorder", Options: icebergtest.Opts(append(base, "max-group-memory-bytes", icebergtest.SpillBudget)...)}},
		{"binpack-deletes", bench.GenerateConfig{Rows: 12000, Commits: 8, Properties: mor}, deleteSome,
			engine.Request{Options: icebergtest.Opts(base...)}},
		{"hilbert-v3", bench.GenerateConfig{Rows: 8000, Commits: 6, FormatVersion: 3}, nil,
			engine.Request{Curve: "hilbert", Options: icebergtest.Opts(append(base, "max-group-memory-bytes", icebergtest.SpillBudget)...)}},
		// A worker sorting a kd group whole builds the tree for the
		// request's windows, as the local rewrite does.
		{"kd-windows-whole", bench.GenerateConfig{Rows: 12000, Commits: 6, Distribution: bench.Clustered}, nil,
			engine.Request{Curve: "kd", Options: icebergtest.Opts(base...), AutoWindows: bandWindows()}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			local, dist, name := icebergtest.TwinTables(t, tc.gen, tc.prepare)
			before := icebergtest.Digest(t, icebergtest.Load(t, dist, name))
			want := icebergtest.Rewrite(t, local, name, tc.cfg)
			j, got, err := runJob(t, dist, name, tc.cfg, false)
			require.NoError(t, err)
			tbl := icebergtest.Load(t, dist, name)
			icebergtest.CheckUnchanged(t, before, tbl)
			assert.Equal(t, j.ID, tbl.CurrentSnapshot().Summary.Properties[format.SummaryJobID])
			assert.True(t, got.Verified)
			assert.Equal(t, want.AddedDataFilesCount, got.AddedDataFilesCount)
			assert.Equal(t, want.RewrittenDataFilesCount, got.RewrittenDataFilesCount)
			assert.Equal(t, want.RemovedDeleteFilesCount, got.RemovedDeleteFilesCount)
			assert.Equal(t, len(want.Plan.Groups), len(j.Groups))
			assert.Equal(t, icebergtest.FileRows(t, icebergtest.Load(t, local, name)), icebergtest.FileRows(t, tbl))
			for _, f := range icebergtest.Files(t, tbl) {
				assert.Contains(t, f.File.FilePath(), j.Tag())
			}
			// After a commit, Abort only sweeps unreferenced files.
			deleted, err := j.Abort(t.Context(), dist)
			require.NoError(t, err)
			assert.Empty(t, deleted)
			icebergtest.CheckUnchanged(t, before, icebergtest.Load(t, dist, name))
		})
	}
}

// TestJobFailureLeavesNothing checks that a job failing after some files
// were written commits nothing and, aborted, leaves no file behind.
func TestJobFailureLeavesNothing(t *testing.T) {
	t.Parallel()
	c := icebergtest.SQLite(t)
	cat, name := icebergtest.NewTable(t, c, bench.GenerateConfig{Rows: 8000, Commits: 6})
	tbl := icebergtest.Load(t, cat, name)
	before, snap := icebergtest.Digest(t, tbl), tbl.CurrentSnapshot().SnapshotID
	dir := strings.TrimPrefix(tbl.Location(), "file://")
	filesBefore := icebergtest.DirFiles(t, dir)
	cfg := engine.Request{Curve: "hilbert", Options: icebergtest.Opts("rewrite-all", "true", "target-file-size-bytes", "65536")}
	_, _, err := runJob(t, cat, name, cfg, true)
	require.ErrorContains(t, err, "injected")
	tbl = icebergtest.Load(t, cat, name)
	assert.Equal(t, snap, tbl.CurrentSnapshot().SnapshotID)
	assert.Empty(t, before.Diff(icebergtest.Digest(t, tbl)))
	assert.Equal(t, filesBefore, icebergtest.DirFiles(t, dir))
	// A rerun succeeds.
	_, res, err := runJob(t, cat, name, cfg, false)
	require.NoError(t, err)
	assert.True(t, res.Verified)
}

// TestJobPartialProgress commits a job's groups batch by batch under
// partial progress, as a local rewrite does: a group whose files do not
// verify fails alone, the other batches commit, and the result says how
// many groups did; without partial progress the same failure commits
// nothing.
func TestJobPartialProgress(t *testing.T) {
	t.Parallel()
	for _, partial := range []bool{true, false} {
		t.Run(fmt.Sprint("partial=", partial), func(t *testing.T) {
			c := icebergtest.SQLite(t)
			cat, name := icebergtest.NewTable(t, c, bench.GenerateConfig{Rows: 9000, Commits: 6, PartitionBy: "day(ts)"})
			tbl := icebergtest.Load(t, cat, name)
			before, snap := icebergtest.Digest(t, tbl), tbl.CurrentSnapshot().SnapshotID
			o := icebergtest.Opts("rewrite-all", "true", "partial-progress.enabled", fmt.Sprint(partial), "partial-progress.max-commits", "10")
			driver, err := job.Prepare(t.Context(), cat, name, engine.Request{Curve: "hilbert", Options: o})
			require.NoError(t, err)
			n := len(driver.Groups)
			require.GreaterOrEqual(t, n, 3)
			files := make([][]iceberg.DataFile, n)
			in, out := make([]verify.Digest, n), make([]verify.Digest, n)
			for gi, g := range driver.Groups {
				require.True(t, g.Whole)
				files[gi], in[gi], out[gi], err = driver.RewriteGroup(t.Context(), gi)
				require.NoError(t, err)
			}
			out[1].Rows++ // group 2's files do not verify
			res, err := driver.Commit(t.Context(), cat, files, in, out)
			require.ErrorIs(t, err, engine.ErrVerify)
			_, aerr := driver.Abort(t.Context(), cat)
			require.NoError(t, aerr)
			tbl = icebergtest.Load(t, cat, name)
			assert.Empty(t, before.Diff(icebergtest.Digest(t, tbl)), "rows unchanged")
			if !partial {
				assert.Equal(t, snap, tbl.CurrentSnapshot().SnapshotID, "nothing committed")
				return
			}
			assert.Contains(t, err.Error(), fmt.Sprintf("partial progress: %d of %d groups committed", n-1, n))
			assert.Equal(t, n-1, res.SnapshotsCommitted)
			assert.Equal(t, len(driver.Groups[1].Files), res.FailedDataFilesCount)
		})
	}
}
