package engine_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/alter"
	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/cluster"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/internal/testing/enginetest"
	"github.com/geocompact/geocompact/job"
	"github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/icebergtable"
	"github.com/geocompact/geocompact/table/layouts"
	"github.com/geocompact/geocompact/table/optval"
)

// TestRewriteFollowsTableLayout: without strategy, curve or sort order a
// rewrite applies the recorded layout and the table's target size; a
// request for another layout is refused unless allowed.
func TestRewriteFollowsTableLayout(t *testing.T) {
	t.Parallel()
	cat, name := newTable(t, sqlite(t), bench.GenerateConfig{Rows: 3000, Commits: 6})
	tbl, err := icebergtable.Open(t.Context(), cat, name)
	require.NoError(t, err)
	_, err = alter.Apply(t.Context(), tbl, alter.Request{Curve: "hilbert", Set: map[string]string{"write.target-file-size-bytes": "40KiB"}})
	require.NoError(t, err)

	dry := rewrite(t, cat, name, engine.Request{DryRun: true, Options: opts(engine.OptRewriteAll, "true")})
	assert.Equal(t, layouts.FromProperty, dry.LayoutSource)
	assert.Equal(t, "hilbert()", dry.SortOrder)
	require.NotEmpty(t, dry.Plan.Groups)
	var bytes int64
	for _, g := range dry.Plan.Groups {
		bytes += g.Bytes
	}
	assert.Greater(t, dry.Plan.Groups[0].OutputFiles, 1, "the table's 40 KiB target splits %d bytes", bytes)

	_, err = enginetest.Rewrite(t.Context(), cat, name, engine.Request{Strategy: engine.BinPack})
	var lce *layouts.ChangeError
	require.ErrorAs(t, err, &lce)
	assert.ErrorIs(t, err, layouts.ErrChange)
	assert.Equal(t, "hilbert()", lce.Recorded)
	assert.Contains(t, err.Error(), "allow the layout change")
	_, err = enginetest.Rewrite(t.Context(), cat, name, engine.Request{Curve: "zorder", DryRun: true})
	assert.ErrorIs(t, err, layouts.ErrChange)
	same := rewrite(t, cat, name, engine.Request{Curve: "hilbert", DryRun: true})
	assert.Equal(t, layouts.FromRequest, same.LayoutSource, "the recorded layout asked for again is no change")

	res := rewrite(t, cat, name, engine.Request{Options: opts(engine.OptRewriteAll, "true")})
	assert.Equal(t, "hilbert()", mustLoad(t, cat, name).CurrentSnapshot().Summary.Properties[table.SummarySortOrder])
	assert.Greater(t, res.AddedDataFilesCount, 1)

	allowed := rewrite(t, cat, name, engine.Request{Strategy: engine.BinPack, AllowLayoutChange: true, Options: opts(engine.OptRewriteAll, "true")})
	assert.Equal(t, "binpack", allowed.Strategy)
	assert.Positive(t, allowed.SnapshotsCommitted)
}

// TestRewriteDryRunChecksColumns: an order over a column the table lacks
// fails the plan, naming the table's columns.
func TestRewriteDryRunChecksColumns(t *testing.T) {
	t.Parallel()
	cat, name := newTable(t, sqlite(t), bench.GenerateConfig{Rows: 200, Commits: 2})
	for _, req := range []engine.Request{
		{SortOrder: "ts, devce_id", DryRun: true},
		{SortOrder: "hilbert(bbox_minx, nope)", DryRun: true},
	} {
		_, err := enginetest.Rewrite(t.Context(), cat, name, req)
		require.ErrorIs(t, err, optval.ErrBad)
		assert.Contains(t, err.Error(), "its columns are id, ts, device_id")
	}
	tbl, err := icebergtable.Open(t.Context(), cat, name)
	require.NoError(t, err)
	_, err = alter.Apply(t.Context(), tbl, alter.Request{Set: map[string]string{layouts.Prop: "linear"}})
	require.NoError(t, err)
	res := rewrite(t, cat, name, engine.Request{DryRun: true})
	assert.Equal(t, "bbox_minx ASC NULLS LAST, bbox_miny ASC NULLS LAST", res.SortOrder)
}

// TestAutoChoosesByFileCount: on clustered points --curve auto estimates
// every candidate and picks the lowest; among the curves alone that is
// the plain (minx, miny) sort for a few files and a two-dimensional
// curve for hundreds, and kd beats them at both ends. The rewrite records
// the choice and its figures.
func TestAutoChoosesByFileCount(t *testing.T) {
	t.Parallel()
	cat, name := newTable(t, sqlite(t), bench.GenerateConfig{Rows: 30000, Commits: 3, Distribution: bench.Clustered, Seed: 1})
	var bytes int64
	for _, f := range tableFiles(t, mustLoad(t, cat, name)) {
		bytes += f.File.FileSizeBytes()
	}
	choose := func(files int64) *engine.Result {
		res := rewrite(t, cat, name, engine.Request{Curve: "auto", DryRun: true,
			Options: opts(engine.OptRewriteAll, "true", engine.OptTargetFileSize, fmt.Sprint(bytes/files))})
		require.Len(t, res.Auto, 1)
		require.Len(t, res.Auto[0].Estimates, len(cluster.AutoCandidates()), "every candidate is estimated")
		best := res.Auto[0].Estimates[0]
		for _, e := range res.Auto[0].Estimates {
			if e.Score < best.Score {
				best = e
			}
		}
		assert.Equal(t, best.Curve, res.Auto[0].Curve, "the lowest score wins")
		return res
	}
	bestCurve := func(res *engine.Result) string {
		best := cluster.Estimate{Score: math.Inf(1)}
		for _, e := range res.Auto[0].Estimates {
			if e.Curve != "kd" && e.Score < best.Score {
				best = e
			}
		}
		return best.Curve
	}
	few := choose(4)
	assert.Equal(t, "linear", bestCurve(few), "%+v", few.Auto[0].Estimates)
	assert.Equal(t, "kd", few.Auto[0].Curve)
	assert.Equal(t, "auto: kd()", few.SortOrder)
	many := choose(300)
	assert.Contains(t, []string{"hilbert", "str"}, bestCurve(many), "%+v", many.Auto[0].Estimates)
	assert.Equal(t, "kd", many.Auto[0].Curve)

	res := rewrite(t, cat, name, engine.Request{Curve: "auto", Options: opts(engine.OptRewriteAll, "true", engine.OptTargetFileSize, fmt.Sprint(bytes/4))})
	assert.Equal(t, "kd", res.Auto[0].Curve)
	sum := mustLoad(t, cat, name).CurrentSnapshot().Summary.Properties
	assert.Contains(t, sum[engine.SummaryAuto], `"curve":"kd"`)
	assert.Contains(t, sum[engine.SummaryAuto], `"estimates":[`)
	assert.Equal(t, few.SortOrder, sum[table.SummarySortOrder])
}

// TestJobLayout: a distributed job refuses --curve auto at preparation
// (its workers sort by one order), checks a layout change there, and its
// workers, which replay the plan, do not check it again.
func TestJobLayout(t *testing.T) {
	t.Parallel()
	cat, name := newTable(t, sqlite(t), bench.GenerateConfig{Rows: 600, Commits: 6})
	_, err := job.Prepare(t.Context(), cat, name, engine.Request{Curve: "auto"})
	require.ErrorIs(t, err, optval.ErrBad)
	assert.Contains(t, err.Error(), "distributed")

	tbl, err := icebergtable.Open(t.Context(), cat, name)
	require.NoError(t, err)
	_, err = alter.Apply(t.Context(), tbl, alter.Request{Curve: "hilbert"})
	require.NoError(t, err)
	_, err = job.Prepare(t.Context(), cat, name, engine.Request{Strategy: engine.BinPack})
	require.ErrorIs(t, err, layouts.ErrChange)
	jb, err := job.Prepare(t.Context(), cat, name, engine.Request{Strategy: engine.BinPack, AllowLayoutChange: true})
	require.NoError(t, err)
	require.NotEmpty(t, jb.Groups)
	require.NoError(t, jb.Open(t.Context(), cat), "a worker replays the allowed plan")
}
