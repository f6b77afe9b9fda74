package main

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/delta"
)

// TestRewriteDelta rewrites a copy of a golden Delta table with deletion
// vectors across ten partitions: a dry run writes nothing; the rewrite
// sorted by a column keeps every live row and commits an OPTIMIZE with
// fewer files; a curve over columns the table lacks and a --where on a
// column it lacks are usage errors.
func TestRewriteDelta(t *testing.T) {
	t.Parallel()
	dir := copyDeltaTable(t, "dv-partitioned-with-checkpoint", time.Hour)
	rows := deltaRows(t, dir)
	version := func() int64 {
		tbl, err := delta.OpenLocal(dir)
		require.NoError(t, err)
		s, err := tbl.Snapshot(t.Context())
		require.NoError(t, err)
		return s.Version
	}
	v0 := version()

	r := runCLI(t, "", false, "rewrite", "--delta", dir, "--option", "rewrite-all=true", "--dry-run")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "part=9")
	assert.Equal(t, v0, version(), "a dry run commits nothing")

	r = runCLI(t, "", false, "rewrite", "--delta", dir, "--curve", "hilbert")
	assert.Equal(t, exitUsage, r.Code, "the table has no spatial columns")
	assert.Contains(t, r.Stderr, "bbox_minx")
	r = runCLI(t, "", false, "--json", "rewrite", "--delta", dir, "--sort-order", "col1", "--option", "rewrite-all=true")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	var res struct {
		Format    string  `json:"format"`
		Rewritten int     `json:"rewritten_data_files_count"`
		Added     int     `json:"added_data_files_count"`
		Verified  bool    `json:"verified"`
		Committed int     `json:"versions_committed"`
		Versions  []int64 `json:"versions"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &res), r.Stdout)
	assert.True(t, res.Verified)
	assert.Greater(t, res.Rewritten, res.Added)
	assert.Equal(t, rows, deltaRows(t, dir))
	assert.Greater(t, version(), v0)
	assert.Equal(t, "delta", res.Format)
	assert.Equal(t, 1, res.Committed)
	assert.Equal(t, []int64{version()}, res.Versions, "the versions the rewrite committed")
	assert.NotContains(t, r.Stdout, "snapshot")

	r = runCLI(t, "", false, "rewrite", "--delta", dir, "--where", "value > 1")
	assert.Equal(t, exitUsage, r.Code)
	assert.Contains(t, r.Stderr, "--where")
	assert.Contains(t, r.Stderr, `unknown column "value"`)
	r = runCLI(t, "", false, "rewrite", "--delta", dir, "--table", "a.b")
	assert.Equal(t, exitUsage, r.Code)
}

// TestRewriteDeltaWhereDryRun scopes a dry run of a Delta rewrite by a
// data column: the plan lists exactly the files whose id statistics may
// hold a match (Spark's statistics of the golden table: ids 0-4, 10-14,
// …, 40-44, 50-59 and 60-65), and nothing is written.
func TestRewriteDeltaWhereDryRun(t *testing.T) {
	t.Parallel()
	dir := copyDeltaTable(t, "basic-with-inserts-deletes-checkpoint", time.Hour)
	before := parquetNames(t, dir)
	r := runCLI(t, "", false, "--json", "rewrite", "--delta", dir, "--where", "id BETWEEN 12 AND 33 OR id IS NULL",
		"--option", "rewrite-all=true", "--dry-run")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	var res struct {
		Plan struct {
			Groups []struct {
				Files []struct {
					Path string `json:"path"`
				} `json:"files"`
			} `json:"groups"`
		} `json:"plan"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &res), r.Stdout)
	require.Len(t, res.Plan.Groups, 1)
	var got []string
	for _, f := range res.Plan.Groups[0].Files {
		got = append(got, f.Path[:len("part-00000-c92cba9e")])
	}
	assert.ElementsMatch(t, []string{"part-00000-c92cba9e", "part-00000-1b0098ea", "part-00000-f80053c6"}, got,
		"the files of ids 10-14, 20-24 and 30-34; no file has a null id")
	assert.Equal(t, before, parquetNames(t, dir), "a dry run writes nothing")
}
