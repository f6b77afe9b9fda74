package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/delta/deltatest"
	"github.com/geocompact/geocompact/table/layouts"
)

// spatialDelta makes a spatial Delta table of n one-file appends of 40
// points each and returns its location.
func spatialDelta(t *testing.T, n int) (*delta.Table, string) {
	t.Helper()
	dir := t.TempDir()
	return deltatest.Fragmented(t, dir, n, 40, deltatest.Options{}), dir
}

// TestAlterDeltaCLI records a curve and Delta's target file size on a
// Delta table, a rewrite --delta without layout flags follows it, and
// protocol properties and --table with --delta are usage errors.
func TestAlterDeltaCLI(t *testing.T) {
	t.Parallel()
	tbl, dir := spatialDelta(t, 3)
	r := runCLI(t, "", false, "alter", "--delta", dir, "--curve", "zorder", "--set", "delta.targetFileSize=2MiB")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "zorder()")
	assert.Contains(t, r.Stdout, "VERSION")
	assert.Contains(t, r.Stdout, "2097152")
	assert.Equal(t, "2097152", deltatest.Snapshot(t, tbl).Metadata.Configuration["delta.targetFileSize"])

	r = runCLI(t, "", false, "rewrite", "--delta", dir, "--option", "rewrite-all", "--dry-run")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "by zorder() (table property "+layouts.Prop+")")

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--set", "delta.enableDeletionVectors=true"}, "protocol upgrade"},
		{[]string{"--unset", "delta.columnMapping.mode"}, "protocol upgrade"},
		{[]string{"--set", "write.target-file-size-bytes=1MiB"}, "delta.targetFileSize"},
		{[]string{"--sort-order", "nope"}, "its columns are"},
		{[]string{"--table", "a.b", "--curve", "hilbert"}, "table"},
		{[]string{"--set", "delta.deletedFileRetentionDuration=interval 213504 days"},
			`delta.deletedFileRetentionDuration: invalid interval "interval 213504 days": over the maximum of 106751 days`},
		{[]string{"--set", "delta.deletedFileRetentionDuration=interval -7 days"},
			`delta.deletedFileRetentionDuration: invalid interval "interval -7 days": -7 days is negative`},
		{[]string{"--set", "delta.logRetentionDuration=interval 9223372036854775808 nanoseconds"},
			"delta.logRetentionDuration: invalid interval"},
	} {
		r := runCLI(t, "", false, append([]string{"alter", "--delta", dir}, tc.args...)...)
		assert.Equal(t, exitUsage, r.Code, "%v: %s", tc.args, r.Stderr)
		assert.Contains(t, r.Stderr, tc.want, "%v", tc.args)
	}
	assert.Equal(t, int64(4), deltatest.Snapshot(t, tbl).Version, "refusals commit nothing")
}

// TestAlterDeltaCLIUnsorted removes a Delta table's recorded layout.
func TestAlterDeltaCLIUnsorted(t *testing.T) {
	t.Parallel()
	tbl, dir := spatialDelta(t, 2)
	require.Equal(t, exitOK, runCLI(t, "", false, "alter", "--delta", dir, "--curve", "hilbert").Code)
	r := runCLI(t, "", false, "alter", "--delta", dir, "--unsorted", "--sort-order", "id")
	assert.Equal(t, exitUsage, r.Code, r.Stderr)
	assert.Equal(t, "hilbert()", deltatest.Snapshot(t, tbl).Metadata.Configuration[layouts.Prop])
	r = runCLI(t, "", false, "alter", "--delta", dir, "--unsorted")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	assert.NotContains(t, deltatest.Snapshot(t, tbl).Metadata.Configuration, layouts.Prop)
	r = runCLI(t, "", false, "rewrite", "--delta", dir, "--option", "rewrite-all", "--dry-run")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	assert.NotContains(t, r.Stdout, "hilbert")
}
