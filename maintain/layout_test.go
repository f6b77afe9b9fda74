package maintain_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/alter"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/maintain"
	"github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/icebergtable"
	"github.com/geocompact/geocompact/table/layouts"
	"github.com/geocompact/geocompact/table/optval"
)

// TestMaintainFollowsTableLayout: with no rewrite layout in the policy, a
// run sorts by the table's recorded curve into its target size, and the
// gate's floor is a quarter of that target.
func TestMaintainFollowsTableLayout(t *testing.T) {
	t.Parallel()
	const name = "t.x"
	cat := fragmented(t, name, 2000, 20)
	tbl, err := icebergtable.Open(t.Context(), cat, name)
	require.NoError(t, err)
	_, err = alter.Apply(t.Context(), tbl, alter.Request{Curve: "hilbert", Set: map[string]string{"write.target-file-size-bytes": "64KiB"}})
	require.NoError(t, err)

	rep, err := maintain.Run(t.Context(), opened(t, cat, name), maintain.Config{Policy: testPolicy(), Owner: "test"})
	require.NoError(t, err, "%+v", rep.Steps)
	assert.Contains(t, rep.Gate.Reason, "average below "+optval.FormatBytes(16<<10))
	require.NotNil(t, rep.Rewrite)
	assert.Equal(t, "hilbert()", rep.Rewrite.SortOrder)
	assert.Equal(t, layouts.FromProperty, rep.Rewrite.LayoutSource)
	assert.Greater(t, rep.Rewrite.AddedDataFilesCount, 1, "64 KiB files, not one: %+v", rep.Before)
	assert.Equal(t, "hilbert()", load(t, cat, name).CurrentSnapshot().Summary.Properties[table.SummarySortOrder])
}

// TestMaintainRefusesLayoutChange: a policy that bin-packs a table laid
// out by a curve fails at the rewrite step, and runs when it allows it.
func TestMaintainRefusesLayoutChange(t *testing.T) {
	t.Parallel()
	const name = "t.x"
	cat := fragmented(t, name, 1000, 10)
	tbl, err := icebergtable.Open(t.Context(), cat, name)
	require.NoError(t, err)
	_, err = alter.Apply(t.Context(), tbl, alter.Request{Curve: "zorder"})
	require.NoError(t, err)
	p := testPolicy()
	p.Rewrite.Strategy = string(engine.BinPack)
	before := load(t, cat, name).CurrentSnapshot().SnapshotID

	rep, err := maintain.Run(t.Context(), opened(t, cat, name), maintain.Config{Policy: p, Owner: "test"})
	require.ErrorIs(t, err, layouts.ErrChange)
	assert.Equal(t, maintain.StepFailed, stepStatus(rep)["rewrite"])
	assert.Equal(t, before, load(t, cat, name).CurrentSnapshot().SnapshotID)
	assert.False(t, hasLeaseTag(load(t, cat, name)), "the lease is released")

	p.Rewrite.AllowLayoutChange = true
	rep, err = maintain.Run(t.Context(), opened(t, cat, name), maintain.Config{Policy: p, Owner: "test"})
	require.NoError(t, err)
	assert.Equal(t, maintain.StepDone, stepStatus(rep)["rewrite"])
	assert.Equal(t, "binpack", rep.Rewrite.Strategy)
}

// TestMaintainDryRunChangesNothing: every step reports what it would do;
// the metadata, the snapshots and the files under the table are as they
// were, the orphan included.
func TestMaintainDryRunChangesNothing(t *testing.T) {
	t.Parallel()
	const name = "t.x"
	cat := fragmented(t, name, 2000, 20)
	tbl := load(t, cat, name)
	dir := tableDir(t, tbl)
	orphan := filepath.Join(dir, "data", "left-by-a-crash.parquet")
	plant(t, orphan, 500, 2*time.Hour)
	files := listFiles(t, dir)
	p := testPolicy()
	p.Manifests.MaxManifests = 5

	rep, err := maintain.Run(t.Context(), opened(t, cat, name), maintain.Config{Policy: p, DryRun: true})
	require.NoError(t, err, "%+v", rep.Steps)
	assert.True(t, rep.DryRun)
	assert.Equal(t, map[string]string{"lease": maintain.StepSkipped, "measure": maintain.StepSkipped, "gate": maintain.StepDone,
		"rewrite": maintain.StepWouldRun, "verify": maintain.StepSkipped, "deletes": maintain.StepSkipped, "manifests": maintain.StepWouldRun,
		"expire": maintain.StepWouldRun, "orphans": maintain.StepWouldRun}, stepStatus(rep))
	assert.EqualValues(t, 20, rep.Before.FileCount)
	assert.Nil(t, rep.After)
	require.NotNil(t, rep.Rewrite)
	assert.True(t, rep.Rewrite.DryRun)
	assert.Equal(t, 20, rep.Rewrite.Plan.Files())
	require.Len(t, rep.Orphans.Files, 1)
	assert.Equal(t, orphan, trimFileScheme(rep.Orphans.Files[0].Path))

	after := load(t, cat, name)
	assert.Equal(t, tbl.MetadataLocation(), after.MetadataLocation(), "no commit")
	assert.Equal(t, snapshotIDs(tbl), snapshotIDs(after))
	assert.Equal(t, files, listFiles(t, dir), "no file written or removed")
	assert.False(t, hasLeaseTag(after))
}
