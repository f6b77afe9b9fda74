package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/alter"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/table/layouts"
)

// TestAlterCLI records a layout and sizes with units, then a rewrite
// without layout flags follows them, and a binpack over the curve is
// refused (exit 2) unless --allow-layout-change.
func TestAlterCLI(t *testing.T) {
	t.Parallel()
	wh := t.TempDir()
	r := runCLI(t, wh, false, "generate", "--table", "geo.t", "--rows", "2000", "--commits", "6")
	require.Equal(t, exitOK, r.Code, r.Stderr)

	r = runCLI(t, wh, false, "alter", "--table", "geo.t", "--curve", "hilbert", "--set", "write.target-file-size-bytes=40KiB")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "hilbert()")
	assert.Contains(t, r.Stdout, layouts.FromProperty)
	assert.Contains(t, r.Stdout, "40960")

	r = runCLI(t, wh, false, "--json", "alter", "--table", "geo.t", "--set", "owner=gis")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	var res alter.Result
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &res))
	assert.Equal(t, "hilbert()", res.Layout.Text, "a property change keeps the layout")

	r = runCLI(t, wh, false, "rewrite", "--table", "geo.t", "--option", "rewrite-all", "--dry-run")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "by hilbert() (table property geocompact.layout)")

	r = runCLI(t, wh, false, "rewrite", "--table", "geo.t", "--strategy", "binpack")
	assert.Equal(t, exitUsage, r.Code)
	assert.Contains(t, r.Stderr, "--allow-layout-change")

	r = runCLI(t, wh, false, "--json", "rewrite", "--table", "geo.t", "--option", "rewrite-all")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	var rw engine.Result
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &rw))
	assert.Equal(t, "hilbert()", rw.SortOrder)
	assert.Greater(t, rw.AddedDataFilesCount, 1, "the table's 40 KiB target")

	r = runCLI(t, wh, false, "rewrite", "--table", "geo.t", "--strategy", "binpack", "--allow-layout-change", "--option", "rewrite-all")
	assert.Equal(t, exitOK, r.Code, r.Stderr)
}

// TestAlterCLIKD: kd, which Iceberg's sort-order spec cannot express,
// is recorded in the layout property, and a rewrite without flags writes
// it; a kd over a column that is not spatial is a usage error.
func TestAlterCLIKD(t *testing.T) {
	t.Parallel()
	wh := t.TempDir()
	require.Equal(t, exitOK, runCLI(t, wh, false, "generate", "--table", "geo.t", "--rows", "6000", "--commits", "4", "--distribution", "clustered").Code)
	r := runCLI(t, wh, false, "alter", "--table", "geo.t", "--curve", "kd", "--set", "write.target-file-size-bytes=40KiB")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "kd()")
	assert.Contains(t, r.Stdout, layouts.FromProperty)

	r = runCLI(t, wh, false, "--json", "rewrite", "--table", "geo.t", "--option", "rewrite-all")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	var rw engine.Result
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &rw))
	assert.Equal(t, "kd()", rw.SortOrder)
	assert.Greater(t, rw.AddedDataFilesCount, 1)

	r = runCLI(t, wh, false, "rewrite", "--table", "geo.t", "--sort-order", "kd(id)", "--allow-layout-change", "--dry-run")
	assert.Equal(t, exitUsage, r.Code)
	assert.Contains(t, r.Stderr, "want one spatial column")
}

// TestAlterCLIUsage: mistakes exit 2 with the fix, before the table is
// touched.
func TestAlterCLIUsage(t *testing.T) {
	t.Parallel()
	wh := t.TempDir()
	require.Equal(t, exitOK, runCLI(t, wh, false, "generate", "--table", "geo.t", "--rows", "100", "--commits", "1").Code)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--curve", "hilbrt"}, "did you mean hilbert?"},
		{[]string{"--curve", "hilbert", "--sort-order", "id"}, "not both"},
		{[]string{"--sort-order", "bbox_minx, nope"}, "its columns are id, ts"},
		{[]string{"--set", "write.target-file-size-bytes=lots"}, "128MiB"},
		{[]string{"--set", "noequals"}, "KEY=VALUE"},
		{[]string{}, "nothing to alter"},
	} {
		r := runCLI(t, wh, false, append([]string{"alter", "--table", "geo.t"}, tc.args...)...)
		assert.Equal(t, exitUsage, r.Code, "%v: %s", tc.args, r.Stderr)
		assert.Contains(t, r.Stderr, tc.want, "%v", tc.args)
	}
}

// TestRewriteCLIAuto: --curve auto's dry run prints every candidate's
// estimate; --windows needs --curve auto.
func TestRewriteCLIAuto(t *testing.T) {
	t.Parallel()
	wh := t.TempDir()
	require.Equal(t, exitOK, runCLI(t, wh, false, "generate", "--table", "geo.t", "--rows", "3000", "--commits", "3").Code)
	r := runCLI(t, wh, false, "rewrite", "--table", "geo.t", "--curve", "auto", "--option", "rewrite-all", "--dry-run")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	for _, want := range []string{"CANDIDATE", "FILES PLANNED (0.1% WINDOWS)", "FILES PLANNED (1% WINDOWS)", "linear", "zorder", "hilbert", "str", "kd", "*"} {
		assert.Contains(t, r.Stdout, want)
	}
	path := t.TempDir() + "/w.json"
	writeFile(t, path, `[{"minx":0,"miny":0,"maxx":10,"maxy":10}]`)
	r = runCLI(t, wh, false, "rewrite", "--table", "geo.t", "--curve", "hilbert", "--windows", path)
	assert.Equal(t, exitUsage, r.Code)
	assert.Contains(t, r.Stderr, "--curve kd")
	r = runCLI(t, wh, false, "rewrite", "--table", "geo.t", "--curve", "kd", "--windows", path, "--option", "rewrite-all", "--dry-run")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	r = runCLI(t, wh, false, "rewrite", "--table", "geo.t", "--curve", "auto", "--windows", path, "--option", "rewrite-all", "--dry-run")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "FILES PLANNED (w.json WINDOWS)")
	r = runCLI(t, wh, false, "rewrite", "--table", "geo.t", "--sort-order", "tss", "--dry-run")
	assert.Equal(t, exitUsage, r.Code)
	assert.Contains(t, r.Stderr, "its columns are")
}

// TestMaintainCLIDryRun prints what each step would do.
func TestMaintainCLIDryRun(t *testing.T) {
	t.Parallel()
	wh := t.TempDir()
	require.Equal(t, exitOK, runCLI(t, wh, false, "generate", "--table", "geo.t", "--rows", "800", "--commits", "8").Code)
	r := runCLI(t, wh, false, "maintain", "--table", "geo.t", "--dry-run")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "would rewrite 8 files")
	assert.Contains(t, r.Stdout, "dry run")
	r = runCLI(t, wh, false, "--json", "inspect", "snapshots", "--table", "geo.t")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	var snaps []map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &snaps))
	assert.Len(t, snaps, 8, "no snapshot added")
}

// TestMaintainCLILayoutChange: a policy that bin-packs a table recorded
// as Hilbert stops at the rewrite step with exit 2, after the report.
func TestMaintainCLILayoutChange(t *testing.T) {
	t.Parallel()
	wh := t.TempDir()
	require.Equal(t, exitOK, runCLI(t, wh, false, "generate", "--table", "geo.t", "--rows", "800", "--commits", "8").Code)
	require.Equal(t, exitOK, runCLI(t, wh, false, "alter", "--table", "geo.t", "--curve", "hilbert").Code)
	policy := t.TempDir() + "/p.yaml"
	writeFile(t, policy, "rewrite:\n  strategy: binpack\n")
	r := runCLI(t, wh, false, "maintain", "--table", "geo.t", "--policy", policy)
	assert.Equal(t, exitUsage, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "STEP")
	assert.Contains(t, r.Stderr, "allow-layout-change")
}

// TestAlterCLIUnsorted: --unsorted clears a recorded curve, so a rewrite
// without layout flags bin-packs without --allow-layout-change; with
// --curve or --sort-order it is a usage error that commits nothing.
func TestAlterCLIUnsorted(t *testing.T) {
	t.Parallel()
	wh := t.TempDir()
	require.Equal(t, exitOK, runCLI(t, wh, false, "generate", "--table", "geo.t", "--rows", "400", "--commits", "4").Code)
	require.Equal(t, exitOK, runCLI(t, wh, false, "alter", "--table", "geo.t", "--curve", "hilbert").Code)
	for _, args := range [][]string{{"--curve", "zorder"}, {"--sort-order", "id"}, {"--set", layouts.Prop + "=str()"}} {
		r := runCLI(t, wh, false, append([]string{"alter", "--table", "geo.t", "--unsorted"}, args...)...)
		assert.Equal(t, exitUsage, r.Code, "%v: %s", args, r.Stderr)
		assert.Contains(t, r.Stderr, "--unsorted", "%v", args)
	}
	r := runCLI(t, wh, false, "--json", "alter", "--table", "geo.t", "--set", "owner=gis")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	var res alter.Result
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &res))
	assert.Equal(t, "hilbert()", res.Layout.Text, "the refusals committed nothing")

	r = runCLI(t, wh, false, "alter", "--table", "geo.t", "--unsorted")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "none (binpack)")
	assert.Contains(t, r.Stdout, layouts.Prop+"  (unset)")

	r = runCLI(t, wh, false, "--json", "rewrite", "--table", "geo.t", "--option", "rewrite-all")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	var rw engine.Result
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &rw))
	assert.Equal(t, string(engine.BinPack), rw.Strategy)
	assert.Equal(t, layouts.FromDefault, rw.LayoutSource)
}
