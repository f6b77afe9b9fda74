package engine_test

import (
	"fmt"
	"testing"

	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/engine/job"
)

// TestAlterRoundTrip records a column order (as the Iceberg sort order),
// a curve (as the property), size properties with units (as byte counts),
// and removes them again.
func TestAlterRoundTrip(t *testing.T) {
	cat, name := newTable(t, sqlite(t), bench.GenerateConfig{Rows: 300, Commits: 3})
	ctx := t.Context()

	res, err := engine.Alter(ctx, cat, name, engine.AlterRequest{SortOrder: "bbox_minx DESC, id",
		Set: map[string]string{"write.target-file-size-bytes": "128MiB", "commit.manifest.target-size-bytes": "1GB", "owner": "gis"}})
	require.NoError(t, err)
	assert.Equal(t, "bbox_minx DESC NULLS LAST, id ASC NULLS FIRST", res.SortOrder)
	assert.Equal(t, engine.TableLayout{Text: res.SortOrder, Source: engine.LayoutFromSortOrder}, res.Layout)
	tbl := mustLoad(t, cat, name)
	assert.Equal(t, "134217728", tbl.Properties()["write.target-file-size-bytes"])
	assert.Equal(t, "1000000000", tbl.Properties()["commit.manifest.target-size-bytes"])
	assert.Equal(t, "gis", tbl.Properties()["owner"])
	so := tbl.SortOrder()
	require.Equal(t, 2, so.Len())
	assert.Equal(t, table.SortDESC, so.Field(0).Direction)
	assert.NotContains(t, tbl.Properties(), engine.PropLayout)

	res, err = engine.Alter(ctx, cat, name, engine.AlterRequest{Curve: "Hilbert", Unset: []string{"owner"}})
	require.NoError(t, err)
	assert.Equal(t, engine.TableLayout{Text: "hilbert()", Source: engine.LayoutFromProperty}, res.Layout)
	tbl = mustLoad(t, cat, name)
	assert.Equal(t, "hilbert()", tbl.Properties()[engine.PropLayout])
	assert.True(t, tbl.SortOrder().IsUnsorted(), "a curve resets the Iceberg sort order")
	assert.NotContains(t, tbl.Properties(), "owner")

	res, err = engine.Alter(ctx, cat, name, engine.AlterRequest{Curve: "auto"})
	require.NoError(t, err)
	assert.Equal(t, "auto", res.Layout.Text)

	res, err = engine.Alter(ctx, cat, name, engine.AlterRequest{SortOrder: "zorder(bbox_minx, bbox_maxy)"})
	require.NoError(t, err)
	assert.Equal(t, "zorder(bbox_minx, bbox_maxy)", mustLoad(t, cat, name).Properties()[engine.PropLayout])

	res, err = engine.Alter(ctx, cat, name, engine.AlterRequest{Curve: "linear"})
	require.NoError(t, err)
	assert.Equal(t, engine.LayoutFromSortOrder, res.Layout.Source, "linear over the bbox columns is a plain sort order")
	assert.NotContains(t, mustLoad(t, cat, name).Properties(), engine.PropLayout)

	_, err = engine.Alter(ctx, cat, name, engine.AlterRequest{Unset: []string{engine.PropLayout}, Set: map[string]string{"gc.enabled": "true"}})
	require.NoError(t, err)
	rec, err := engine.RecordedLayout(mustLoad(t, cat, name))
	require.NoError(t, err)
	assert.Equal(t, engine.LayoutFromSortOrder, rec.Source, "unsetting the property leaves the Iceberg sort order")
}

// TestAlterRefusesBadInput names the problem and changes nothing.
func TestAlterRefusesBadInput(t *testing.T) {
	cat, name := newTable(t, sqlite(t), bench.GenerateConfig{Rows: 100, Commits: 1})
	before := mustLoad(t, cat, name).Metadata()
	for _, tc := range []struct {
		name string
		req  engine.AlterRequest
		want string
	}{
		{"unknown curve", engine.AlterRequest{Curve: "hilbrt"}, "did you mean hilbert?"},
		{"auto misspelt", engine.AlterRequest{Curve: "autoo"}, "did you mean auto?"},
		{"missing column", engine.AlterRequest{SortOrder: "bbox_minx, tss"}, `no column "tss"; its columns are id, ts, device_id`},
		{"curve and order", engine.AlterRequest{Curve: "hilbert", SortOrder: "id"}, "not both"},
		{"nothing", engine.AlterRequest{}, "nothing to alter"},
		{"bad size", engine.AlterRequest{Set: map[string]string{"write.target-file-size-bytes": "12XB"}}, "write.target-file-size-bytes"},
		{"zero size", engine.AlterRequest{Set: map[string]string{"write.target-file-size-bytes": "0"}}, "positive"},
		{"misspelt key", engine.AlterRequest{Set: map[string]string{"write.target-file-size": "1MiB"}}, "did you mean write.target-file-size-bytes?"},
		{"set and unset", engine.AlterRequest{Set: map[string]string{"owner": "a"}, Unset: []string{"owner"}}, "both set and unset"},
		{"bad layout property", engine.AlterRequest{Set: map[string]string{engine.PropLayout: "hilbert("}}, engine.PropLayout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := engine.Alter(t.Context(), cat, name, tc.req)
			require.ErrorIs(t, err, engine.ErrOption)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	assert.Equal(t, before.LastUpdatedMillis(), mustLoad(t, cat, name).Metadata().LastUpdatedMillis(), "nothing was committed")
}

// TestRewriteFollowsTableLayout: without strategy, curve or sort order a
// rewrite applies the recorded layout and the table's target size; a
// request for another layout is refused unless allowed.
func TestRewriteFollowsTableLayout(t *testing.T) {
	cat, name := newTable(t, sqlite(t), bench.GenerateConfig{Rows: 3000, Commits: 6})
	_, err := engine.Alter(t.Context(), cat, name, engine.AlterRequest{Curve: "hilbert", Set: map[string]string{"write.target-file-size-bytes": "40KiB"}})
	require.NoError(t, err)

	dry := rewrite(t, cat, name, engine.Request{DryRun: true, Options: opts(engine.OptRewriteAll, "true")})
	assert.Equal(t, engine.LayoutFromProperty, dry.LayoutSource)
	assert.Equal(t, "hilbert()", dry.SortOrder)
	require.NotEmpty(t, dry.Plan.Groups)
	var bytes int64
	for _, g := range dry.Plan.Groups {
		bytes += g.Bytes
	}
	assert.Greater(t, dry.Plan.Groups[0].OutputFiles, 1, "the table's 40 KiB target splits %d bytes", bytes)

	_, err = engine.Rewrite(t.Context(), cat, name, engine.Request{Strategy: engine.BinPack})
	var lce *engine.LayoutChangeError
	require.ErrorAs(t, err, &lce)
	assert.ErrorIs(t, err, engine.ErrLayoutChange)
	assert.Equal(t, "hilbert()", lce.Recorded)
	assert.Contains(t, err.Error(), "--allow-layout-change")
	_, err = engine.Rewrite(t.Context(), cat, name, engine.Request{Curve: "zorder", DryRun: true})
	assert.ErrorIs(t, err, engine.ErrLayoutChange)
	same := rewrite(t, cat, name, engine.Request{Curve: "hilbert", DryRun: true})
	assert.Equal(t, engine.LayoutFromRequest, same.LayoutSource, "the recorded layout asked for again is no change")

	res := rewrite(t, cat, name, engine.Request{Options: opts(engine.OptRewriteAll, "true")})
	assert.Equal(t, "hilbert()", mustLoad(t, cat, name).CurrentSnapshot().Summary.Properties[engine.SummarySortOrder])
	assert.Greater(t, res.AddedDataFilesCount, 1)

	allowed := rewrite(t, cat, name, engine.Request{Strategy: engine.BinPack, AllowLayoutChange: true, Options: opts(engine.OptRewriteAll, "true")})
	assert.Equal(t, "binpack", allowed.Strategy)
	assert.Positive(t, allowed.SnapshotsCommitted)
}

// TestRewriteDryRunChecksColumns: an order over a column the table lacks
// fails the plan, naming the table's columns.
func TestRewriteDryRunChecksColumns(t *testing.T) {
	cat, name := newTable(t, sqlite(t), bench.GenerateConfig{Rows: 200, Commits: 2})
	for _, req := range []engine.Request{
		{SortOrder: "ts, devce_id", DryRun: true},
		{SortOrder: "hilbert(bbox_minx, nope)", DryRun: true},
	} {
		_, err := engine.Rewrite(t.Context(), cat, name, req)
		require.ErrorIs(t, err, engine.ErrOption)
		assert.Contains(t, err.Error(), "its columns are id, ts, device_id")
	}
	_, err := engine.Alter(t.Context(), cat, name, engine.AlterRequest{Set: map[string]string{engine.PropLayout: "linear"}})
	require.NoError(t, err)
	res := rewrite(t, cat, name, engine.Request{DryRun: true})
	assert.Equal(t, "bbox_minx ASC NULLS LAST, bbox_miny ASC NULLS LAST", res.SortOrder)
}

// TestAutoChoosesByFileCount: on clustered points --curve auto picks the
// plain (minx, miny) sort for a few files and a two-dimensional layout
// for hundreds, and records the choice and its figures.
func TestAutoChoosesByFileCount(t *testing.T) {
	cat, name := newTable(t, sqlite(t), bench.GenerateConfig{Rows: 30000, Commits: 3, Distribution: bench.Clustered, Seed: 1})
	var bytes int64
	for _, f := range tableFiles(t, mustLoad(t, cat, name)) {
		bytes += f.File.FileSizeBytes()
	}
	choose := func(files int64) *engine.Result {
		res := rewrite(t, cat, name, engine.Request{Curve: "auto", DryRun: true,
			Options: opts(engine.OptRewriteAll, "true", engine.OptTargetFileSize, fmt.Sprint(bytes/files))})
		require.Len(t, res.Auto, 1)
		assert.Len(t, res.Auto[0].Estimates, 4, "every candidate is estimated")
		return res
	}
	few := choose(4)
	assert.Equal(t, "linear", few.Auto[0].Curve, "%+v", few.Auto[0].Estimates)
	assert.Equal(t, "auto: bbox_minx ASC NULLS LAST, bbox_miny ASC NULLS LAST", few.SortOrder)
	many := choose(300)
	t.Logf("4 files: %+v; 300 files: %+v", few.Auto[0].Estimates, many.Auto[0].Estimates)
	assert.Contains(t, []string{"hilbert", "str"}, many.Auto[0].Curve, "%+v", many.Auto[0].Estimates)

	res := rewrite(t, cat, name, engine.Request{Curve: "auto", Options: opts(engine.OptRewriteAll, "true", engine.OptTargetFileSize, fmt.Sprint(bytes/4))})
	assert.Equal(t, "linear", res.Auto[0].Curve)
	sum := mustLoad(t, cat, name).CurrentSnapshot().Summary.Properties
	assert.Contains(t, sum[engine.SummaryAuto], `"curve":"linear"`)
	assert.Contains(t, sum[engine.SummaryAuto], `"estimates":[`)
	assert.Equal(t, few.SortOrder, sum[engine.SummarySortOrder])
}

// TestJobLayout: a distributed job refuses --curve auto at preparation
// (its workers sort by one order), checks a layout change there, and its
// workers, which replay the plan, do not check it again.
func TestJobLayout(t *testing.T) {
	cat, name := newTable(t, sqlite(t), bench.GenerateConfig{Rows: 600, Commits: 6})
	_, err := job.Prepare(t.Context(), cat, name, engine.Request{Curve: "auto"})
	require.ErrorIs(t, err, engine.ErrOption)
	assert.Contains(t, err.Error(), "distributed")

	_, err = engine.Alter(t.Context(), cat, name, engine.AlterRequest{Curve: "hilbert"})
	require.NoError(t, err)
	_, err = job.Prepare(t.Context(), cat, name, engine.Request{Strategy: engine.BinPack})
	require.ErrorIs(t, err, engine.ErrLayoutChange)
	jb, err := job.Prepare(t.Context(), cat, name, engine.Request{Strategy: engine.BinPack, AllowLayoutChange: true})
	require.NoError(t, err)
	require.NotEmpty(t, jb.Groups)
	require.NoError(t, jb.Open(t.Context(), cat), "a worker replays the allowed plan")
}
