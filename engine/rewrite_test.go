package engine_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/internal/testing/enginetest"
	"github.com/geocompact/geocompact/internal/testing/testenv"
	format "github.com/geocompact/geocompact/table"
)

func TestRewriteBinpackMerges(t *testing.T) {
	t.Parallel()
	eachCatalog(t, func(t *testing.T, c testenv.Catalog) {
		cat, name := newTable(t, c, bench.GenerateConfig{Rows: 4000, Commits: 20})
		before := tableDigest(t, mustLoad(t, cat, name))
		res := rewrite(t, cat, name, engine.Request{})
		if res.RewrittenDataFilesCount != 20 || res.AddedDataFilesCount != 1 {
			t.Fatalf("rewrote %d files into %d, want 20 into 1", res.RewrittenDataFilesCount, res.AddedDataFilesCount)
		}
		if !res.Verified || res.SnapshotsCommitted != 1 || res.NoopReason != "" {
			t.Fatalf("result %+v", res)
		}
		tbl := mustLoad(t, cat, name)
		if n := len(tableFiles(t, tbl)); n != 1 {
			t.Fatalf("%d files after, want 1", n)
		}
		checkUnchanged(t, before, tbl)
		if got := tbl.CurrentSnapshot().Summary.Properties[format.SummaryStrategy]; got != "binpack" {
			t.Fatalf("summary strategy %q", got)
		}
	})
}

func TestRewriteSplitsOversizedFiles(t *testing.T) {
	t.Parallel()
	eachCatalog(t, func(t *testing.T, c testenv.Catalog) {
		cat, name := newTable(t, c, bench.GenerateConfig{Rows: 40000, Commits: 1})
		tbl := mustLoad(t, cat, name)
		size := tableFiles(t, tbl)[0].File.FileSizeBytes()
		before := tableDigest(t, tbl)
		target := size / 6
		res := rewrite(t, cat, name, engine.Request{Options: opts("target-file-size-bytes", fmt.Sprint(target))})
		if res.RewrittenDataFilesCount != 1 || res.AddedDataFilesCount < 5 {
			t.Fatalf("split 1 file of %d bytes into %d files (target %d)", size, res.AddedDataFilesCount, target)
		}
		tbl = mustLoad(t, cat, name)
		files := tableFiles(t, tbl)
		var counts []int64
		for _, f := range files {
			counts = append(counts, f.File.Count())
		}
		// Equal row counts per file, at most one row apart: no tiny tail.
		if slices.Max(counts)-slices.Min(counts) > 1 {
			t.Fatalf("uneven split: rows per file %v", counts)
		}
		checkUnchanged(t, before, tbl)
	})
}

func TestRewriteMinInputFiles(t *testing.T) {
	t.Parallel()
	eachCatalog(t, func(t *testing.T, c testenv.Catalog) {
		for _, tc := range []struct {
			commits int
			noop    bool
		}{{4, true}, {5, false}} {
			t.Run(fmt.Sprintf("%d files", tc.commits), func(t *testing.T) {
				cat, name := newTable(t, c, bench.GenerateConfig{Rows: 1000, Commits: tc.commits})
				res := rewrite(t, cat, name, engine.Request{})
				if tc.noop {
					if res.RewrittenDataFilesCount != 0 || res.SnapshotsCommitted != 0 {
						t.Fatalf("rewrote %d files, want none", res.RewrittenDataFilesCount)
					}
					for _, want := range []string{"4 candidate files", "min-input-files=5", "set the option min-input-files=4"} {
						if !strings.Contains(res.NoopReason, want) {
							t.Fatalf("noop reason %q lacks %q", res.NoopReason, want)
						}
					}
					return
				}
				if res.RewrittenDataFilesCount != 5 || res.NoopReason != "" {
					t.Fatalf("rewrote %d files (noop %q), want 5", res.RewrittenDataFilesCount, res.NoopReason)
				}
			})
		}
	})
}

func TestRewriteUnknownOption(t *testing.T) {
	t.Parallel()
	eachCatalog(t, func(t *testing.T, c testenv.Catalog) {
		cat, name := newTable(t, c, bench.GenerateConfig{Rows: 100, Commits: 2})
		_, err := enginetest.Rewrite(t.Context(), cat, name, engine.Request{Options: opts("target-file-size", "10")})
		if err == nil || !strings.Contains(err.Error(), `"target-file-size"`) || !strings.Contains(err.Error(), "target-file-size-bytes") {
			t.Fatalf("error %v should name the option and list valid ones", err)
		}
	})
}

func TestRewriteDryRunWritesNothing(t *testing.T) {
	t.Parallel()
	eachCatalog(t, func(t *testing.T, c testenv.Catalog) {
		cat, name := newTable(t, c, bench.GenerateConfig{Rows: 1000, Commits: 6})
		tbl := mustLoad(t, cat, name)
		snap := tbl.CurrentSnapshot().SnapshotID
		res := rewrite(t, cat, name, engine.Request{Curve: "hilbert", DryRun: true})
		if len(res.Plan.Groups) != 1 || len(res.Plan.Groups[0].Files) != 6 || res.RewrittenDataFilesCount != 0 {
			t.Fatalf("plan %+v, result %+v", res.Plan, res)
		}
		if got := mustLoad(t, cat, name).CurrentSnapshot().SnapshotID; got != snap {
			t.Fatalf("dry run committed snapshot %d", got)
		}
	})
}

func TestRewritePartitionedWhereUTC(t *testing.T) {
	t.Parallel()
	eachCatalog(t, func(t *testing.T, c testenv.Catalog) {
		cat, name := newTable(t, c, bench.GenerateConfig{Rows: 6000, Commits: 12, PartitionBy: "day(ts)",
			Start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Span: 72 * time.Hour})
		tbl := mustLoad(t, cat, name)
		before := tableDigest(t, tbl)
		byDay := map[string]int{}
		for _, f := range tableFiles(t, tbl) {
			byDay[fmt.Sprint(f.File.Partition())]++
		}
		if len(byDay) != 3 {
			t.Fatalf("files span %d days, want 3", len(byDay))
		}
		res := rewrite(t, cat, name, engine.Request{Curve: "hilbert", Where: "ts >= '2026-01-02' AND ts < '2026-01-03'", Options: opts("min-input-files", "2")})
		if len(res.Plan.Groups) != 1 || !strings.Contains(res.Plan.Groups[0].Partition, "2026-01-02") {
			t.Fatalf("groups %+v, want one for 2026-01-02", res.Plan.Groups)
		}
		tbl = mustLoad(t, cat, name)
		checkUnchanged(t, before, tbl)
		after := map[string]int{}
		for _, f := range tableFiles(t, tbl) {
			after[fmt.Sprint(f.File.Partition())]++
		}
		ones := 0
		for _, n := range after {
			if n == 1 {
				ones++
			}
		}
		if ones != 1 || len(after) != 3 {
			t.Fatalf("files per day after: %v; want one day compacted to 1 file", after)
		}
	})
}

func TestRewritePartitionedNoGroupSpansPartitions(t *testing.T) {
	t.Parallel()
	eachCatalog(t, func(t *testing.T, c testenv.Catalog) {
		cat, name := newTable(t, c, bench.GenerateConfig{Rows: 6000, Commits: 12, PartitionBy: "day(ts)"})
		res := rewrite(t, cat, name, engine.Request{Curve: "zorder", Options: opts("min-input-files", "2")})
		if len(res.Plan.Groups) != 3 {
			t.Fatalf("%d groups, want 3 (one per day)", len(res.Plan.Groups))
		}
		for _, g := range res.Plan.Groups {
			for _, f := range g.Files {
				if f.Partition != g.Partition {
					t.Fatalf("group %s holds a file of %s", g.Partition, f.Partition)
				}
			}
		}
		if n := len(tableFiles(t, mustLoad(t, cat, name))); n != 3 {
			t.Fatalf("%d files after, want 3", n)
		}
	})
}

func TestRewritePartialProgress(t *testing.T) {
	t.Parallel()
	eachCatalog(t, func(t *testing.T, c testenv.Catalog) {
		cat, name := newTable(t, c, bench.GenerateConfig{Rows: 8000, Commits: 16, PartitionBy: "day(ts)", Span: 96 * time.Hour})
		snaps := len(mustLoad(t, cat, name).Metadata().Snapshots())
		res := rewrite(t, cat, name, engine.Request{Options: opts("partial-progress.enabled", "true", "partial-progress.max-commits", "2", "min-input-files", "2")})
		if len(res.Plan.Groups) != 4 || res.SnapshotsCommitted != 2 {
			t.Fatalf("%d groups in %d commits, want 4 in 2", len(res.Plan.Groups), res.SnapshotsCommitted)
		}
		if got := len(mustLoad(t, cat, name).Metadata().Snapshots()); got != snaps+2 {
			t.Fatalf("snapshots %d -> %d, want +2", snaps, got)
		}
	})
}

func TestRewriteV3KeepsLineage(t *testing.T) {
	t.Parallel()
	eachCatalog(t, func(t *testing.T, c testenv.Catalog) {
		cat, name := newTable(t, c, bench.GenerateConfig{Rows: 3000, Commits: 6, FormatVersion: 3})
		before := tableDigest(t, mustLoad(t, cat, name))
		res := rewrite(t, cat, name, engine.Request{Curve: "hilbert"})
		if res.AddedDataFilesCount != 1 {
			t.Fatalf("added %d", res.AddedDataFilesCount)
		}
		checkUnchanged(t, before, mustLoad(t, cat, name))
	})
}

// TestRewritePartialProgressCountsCommittedGroups fails the first (and
// largest) group of a partial-progress rewrite: the error must count the
// groups that did commit, not a prefix of the plan as long as the files
// rewritten.
func TestRewritePartialProgressCountsCommittedGroups(t *testing.T) {
	t.Parallel()
	cat, name := newTable(t, testenv.Catalogs(t)[0], bench.GenerateConfig{Rows: 6000, Commits: 12, PartitionBy: "day(ts)",
		Start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Span: 72 * time.Hour})
	// Append the first day's rows again, several times, so its group holds
	// more files than the other two together.
	for range 6 {
		tbl := mustLoad(t, cat, name)
		_, recs, err := tbl.Scan(table.WithRowFilter(iceberg.LessThan(iceberg.Reference("ts"), "2026-01-02T00:00:00+00:00"))).ToArrowRecords(t.Context())
		require.NoError(t, err)
		var rows []arrow.RecordBatch
		for rec, err := range recs {
			require.NoError(t, err)
			rows = append(rows, rec)
		}
		rdr, err := array.NewRecordReader(rows[0].Schema(), rows)
		require.NoError(t, err)
		_, err = tbl.Append(t.Context(), rdr, nil)
		rdr.Release()
		require.NoError(t, err)
	}
	var calls atomic.Int32
	ctx := engine.WithTestHooks(t.Context(), engine.TestHooks{AfterWrite: func() error {
		if calls.Add(1) == 1 {
			return errors.New("disk full")
		}
		return nil
	}})
	res, err := enginetest.Rewrite(ctx, cat, name, engine.Request{Options: opts(
		"partial-progress.enabled", "true", "partial-progress.max-commits", "3", "min-input-files", "2",
		"max-concurrent-file-group-rewrites", "1", "rewrite-job-order", "files-desc")})
	require.Error(t, err)
	require.NotNil(t, res)
	groups := res.Plan.Groups
	require.Len(t, groups, 3)
	require.Greater(t, len(groups[0].Files), len(groups[1].Files)+len(groups[2].Files), "the failing group must be the largest")
	assert.Equal(t, 2, res.SnapshotsCommitted)
	assert.Contains(t, err.Error(), "partial progress: 2 of 3 groups committed")
	assert.ErrorContains(t, err, "disk full")
}

// TestRewriteEvolvedPartitionSpec checks that files written under an older
// partition spec are rewritten into the current one (as Spark's
// rewrite_data_files does), though their rows arrive in the old spec's
// partitions, not clustered by the new one.
func TestRewriteEvolvedPartitionSpec(t *testing.T) {
	t.Parallel()
	c := testenv.Catalogs(t)[0]
	cat, name := newTable(t, c, bench.GenerateConfig{Rows: 3000, Commits: 4, PartitionBy: "day(ts)"})
	tx := mustLoad(t, cat, name).NewTransaction()
	require.NoError(t, tx.UpdateSpec(true).AddField("device_id", iceberg.BucketTransform{NumBuckets: 4}, "device_bucket").Commit())
	tbl, err := tx.Commit(t.Context())
	require.NoError(t, err)
	spec := tbl.Metadata().DefaultPartitionSpec()
	require.NotZero(t, spec)
	before := tableDigest(t, tbl)

	res := rewrite(t, cat, name, engine.Request{Options: opts("rewrite-all", "true")})
	require.Positive(t, res.AddedDataFilesCount)
	after := mustLoad(t, cat, name)
	assert.Equal(t, before, tableDigest(t, after))
	for _, task := range tableFiles(t, after) {
		assert.EqualValues(t, spec, task.File.SpecID(), "%s is not in the current spec", task.File.FilePath())
	}
}
