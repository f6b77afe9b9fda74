package main

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/delta/deltatest"
	"github.com/geocompact/geocompact/maintain"
)

// TestMaintainDeltaCLI: a dry run prints the optimize it would do and the
// Iceberg steps as not applicable; a run optimizes and keeps every row; a
// second run has nothing to do; a policy vacuuming with less than the
// table's retention is a usage error.
func TestMaintainDeltaCLI(t *testing.T) {
	t.Parallel()
	tbl, dir := spatialDelta(t, 6)
	rows := deltatest.LiveRows(t, tbl)

	r := runCLI(t, "", false, "maintain", "--delta", dir, "--dry-run")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "would rewrite 6 files")
	assert.Contains(t, r.Stdout, "a Delta table has no manifests")
	assert.Regexp(t, `\nversions +7 +- *\n`, r.Stdout, "the log's versions, by their name")
	assert.Regexp(t, `\noldest version age +[0-9.]+ +- *\n`, r.Stdout)
	assert.NotRegexp(t, `\n(oldest )?snapshots? `, r.Stdout)
	assert.Equal(t, int64(6), deltatest.Snapshot(t, tbl).Version)

	var rep maintain.Report
	r = runCLI(t, "", false, "--json", "maintain", "--delta", dir)
	require.Equal(t, exitOK, r.Code, r.Stderr)
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &rep), r.Stdout)
	require.NotNil(t, rep.After)
	assert.Equal(t, int64(1), rep.After.FileCount)
	assert.Equal(t, maintain.FormatDelta, rep.Format)
	assert.Equal(t, 7, rep.Before.SnapshotCount, "versions 0 to 6")
	assert.Equal(t, 9, rep.After.SnapshotCount, "and the OPTIMIZE and VACUUM END commits")
	assert.Contains(t, r.Stdout, `"version_count": 9`)
	assert.Contains(t, r.Stdout, `"oldest_version_age_seconds"`)
	assert.NotContains(t, r.Stdout, "snapshot_count")
	assert.Contains(t, r.Stdout, "in 1 version(s)")
	assert.NotContains(t, r.Stdout, "snapshot_age")
	assert.True(t, rep.Rewrite.Verified)
	assert.Contains(t, r.Stdout, `"versions_committed": 1`, "the rewrite's commits are versions")
	assert.Regexp(t, `"versions": \[\s*7\s*\]`, r.Stdout)
	assert.NotContains(t, r.Stdout, "snapshots_committed")
	assert.NotContains(t, r.Stdout, "snapshot_ids")
	assert.Equal(t, 1, rep.Rewrite.SnapshotsCommitted)
	assert.Equal(t, []int64{7}, rep.Rewrite.SnapshotIDs)
	assert.Equal(t, rows, deltatest.LiveRows(t, tbl))

	r = runCLI(t, "", false, "--json", "maintain", "--delta", dir)
	require.Equal(t, exitOK, r.Code, r.Stderr)
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &rep), r.Stdout)
	for _, s := range rep.Steps {
		assert.Contains(t, []string{maintain.StepDone, maintain.StepNoop, maintain.StepSkipped, maintain.StepNotApplicable}, s.Status, s.Step)
		if s.Step == "rewrite" || s.Step == "vacuum" {
			assert.Equal(t, maintain.StepSkipped, s.Status, "%s: %s", s.Step, s.Detail)
		}
	}

	policy := filepath.Join(t.TempDir(), "p.yaml")
	writeFile(t, policy, "vacuum:\n  retain: 1d\n  every: 0d\n")
	r = runCLI(t, "", false, "maintain", "--delta", dir, "--policy", policy)
	assert.Equal(t, exitUsage, r.Code, r.Stderr)
	assert.Contains(t, r.Stderr, "delta.deletedFileRetentionDuration")
	r = runCLI(t, "", false, "maintain", "--delta", dir, "--table", "a.b")
	assert.Equal(t, exitUsage, r.Code)
}

// TestMaintainDeltaAbsolutePaths: maintain on a table whose log names its
// files by absolute file:// URIs rewrites it and vacuums nothing a
// version inside the retention reads: the files it replaced were removed
// just now, so the version before the rewrite still reads whole.
func TestMaintainDeltaAbsolutePaths(t *testing.T) {
	t.Parallel()
	tbl, dir := spatialDelta(t, 6)
	deltatest.AbsolutePaths(t, dir)
	deltatest.Age(t, dir, 30*24*time.Hour)
	before := deltatest.Snapshot(t, tbl)
	rows := deltatest.LiveRows(t, tbl)

	r := runCLI(t, "", false, "maintain", "--delta", dir)
	require.Equal(t, exitOK, r.Code, r.Stderr)
	after := deltatest.Snapshot(t, tbl)
	require.Greater(t, after.Version, before.Version, "the table was rewritten")
	assert.Equal(t, rows, deltatest.LiveRows(t, tbl))
	for _, s := range []*delta.Snapshot{before, after} {
		for _, a := range s.Files {
			p, inside, err := tbl.Store.TableRoot().Canonical(a.Path)
			require.NoError(t, err)
			require.True(t, inside, a.Path)
			assert.FileExists(t, filepath.Join(dir, filepath.FromSlash(p)), "version %d", s.Version)
		}
	}
	var n int64
	require.NoError(t, tbl.Read(t.Context(), before, delta.ReadOptions{}, func(_ *delta.Add, rec arrow.RecordBatch) error {
		n += rec.NumRows()
		return nil
	}))
	assert.Equal(t, rows, n, "the version before the rewrite reads whole")
}
