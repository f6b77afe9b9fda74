package maintain_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/delta/deltatest"
	"github.com/geocompact/geocompact/maintain"
	"github.com/geocompact/geocompact/table/layouts"
)

// fragmentedDelta is a spatial Delta table of six one-file appends that
// records a Hilbert layout, with a stray file left a month ago by a
// writer that never committed it.
func fragmentedDelta(t *testing.T) (*delta.Table, string) {
	t.Helper()
	dir := t.TempDir()
	tbl := deltatest.Fragmented(t, dir, 6, 30, deltatest.Options{Properties: map[string]string{layouts.Prop: "hilbert"}})
	stray := filepath.Join(dir, "stray.parquet")
	require.NoError(t, os.WriteFile(stray, []byte("never committed"), 0o644))
	old := time.Now().Add(-30 * 24 * time.Hour)
	require.NoError(t, os.Chtimes(stray, old, old))
	return tbl, dir
}

// statuses maps each step to its status (the last of a repeated step).
func statuses(rep *maintain.Report) map[string]string {
	out := map[string]string{}
	for _, s := range rep.Steps {
		out[s.Step] = s.Status
	}
	return out
}

// TestRunDelta: a dry run says what it would optimize and vacuum and
// changes nothing; a run optimizes by the recorded layout, verifies,
// vacuums only what is past the table's retention, and keeps every row;
// a second run has nothing to do.
func TestRunDelta(t *testing.T) {
	t.Parallel()
	tbl, dir := fragmentedDelta(t)
	rows := deltatest.LiveRows(t, tbl)
	v0 := deltatest.Snapshot(t, tbl).Version

	rep, err := maintain.RunDelta(t.Context(), dir, maintain.Config{DryRun: true})
	require.NoError(t, err)
	st := statuses(rep)
	assert.Equal(t, maintain.StepNotApplicable, st["lease"])
	assert.Equal(t, maintain.StepWouldRun, st["rewrite"])
	for _, s := range []string{"manifests", "expire", "orphans"} {
		assert.Equal(t, maintain.StepNotApplicable, st[s], s)
	}
	assert.Equal(t, maintain.StepWouldRun, st["vacuum"])
	require.NotNil(t, rep.Vacuum)
	assert.Equal(t, []delta.VacuumFile{{Path: "stray.parquet", Bytes: 15}}, rep.Vacuum.Files)
	assert.Equal(t, v0, deltatest.Snapshot(t, tbl).Version, "a dry run commits nothing")
	assert.FileExists(t, filepath.Join(dir, "stray.parquet"))

	rep, err = maintain.RunDelta(t.Context(), dir, maintain.Config{})
	require.NoError(t, err)
	st = statuses(rep)
	assert.Equal(t, maintain.StepDone, st["rewrite"])
	assert.Equal(t, maintain.StepDone, st["verify"])
	assert.Equal(t, maintain.StepDone, st["vacuum"])
	require.NotNil(t, rep.Rewrite)
	assert.Equal(t, layouts.FromProperty, rep.Rewrite.LayoutSource)
	assert.Equal(t, int64(6), rep.Before.FileCount)
	assert.Equal(t, int64(1), rep.After.FileCount)
	assert.Equal(t, rows, deltatest.LiveRows(t, tbl))
	assert.NoFileExists(t, filepath.Join(dir, "stray.parquet"))
	assert.FileExists(t, filepath.Join(dir, "f0.parquet"), "a file removed just now is within the retention")

	v1 := deltatest.Snapshot(t, tbl).Version
	rep, err = maintain.RunDelta(t.Context(), dir, maintain.Config{})
	require.NoError(t, err)
	st = statuses(rep)
	assert.Equal(t, maintain.StepNoop, st["gate"])
	assert.Equal(t, maintain.StepSkipped, st["rewrite"])
	assert.Equal(t, maintain.StepSkipped, st["vacuum"])
	assert.Contains(t, rep.Steps[len(rep.Steps)-2].Detail, "last vacuum")
	assert.Equal(t, v1, deltatest.Snapshot(t, tbl).Version, "nothing to do commits nothing")
	assert.Equal(t, rows, deltatest.LiveRows(t, tbl))
}

// TestRunDeltaRetention: a policy may not vacuum with less than the
// table's retention.
func TestRunDeltaRetention(t *testing.T) {
	t.Parallel()
	tbl, dir := fragmentedDelta(t)
	p, err := maintain.ParsePolicy([]byte("gate:\n  min-avg-file-bytes: -1\nvacuum:\n  retain: 2d\n  every: 0d\n"), "p.yaml")
	require.NoError(t, err)
	rep, err := maintain.RunDelta(t.Context(), dir, maintain.Config{Policy: p})
	require.ErrorIs(t, err, maintain.ErrPolicy)
	assert.Contains(t, err.Error(), "delta.deletedFileRetentionDuration of 7d")
	assert.Equal(t, maintain.StepFailed, statuses(rep)["vacuum"])
	assert.FileExists(t, filepath.Join(dir, "stray.parquet"))
	assert.Equal(t, int64(6), deltatest.Snapshot(t, tbl).Version)
}
