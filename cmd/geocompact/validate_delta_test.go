package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/delta/deltatest"
	"github.com/geocompact/geocompact/internal/testing/testenv"
)

// newDeltaPoints creates a Delta table in a temporary directory with one
// data file per group of rows, appended in one commit.
func newDeltaPoints(t *testing.T, opts deltatest.Options, files ...[]deltatest.Row) (string, *delta.Table) {
	t.Helper()
	dir := t.TempDir()
	tbl := deltatest.Create(t, dir, opts)
	var adds []*delta.Add
	var id int64
	for i, rows := range files {
		adds = append(adds, deltatest.WriteFile(t, tbl, "f"+string(rune('a'+i))+".parquet", "p", id, rows...))
		id += int64(len(rows))
	}
	deltatest.Append(t, tbl, adds...)
	return dir, tbl
}

func TestValidateDelta(t *testing.T) {
	good, _ := newDeltaPoints(t, deltatest.Options{ColumnMapping: "name"},
		[]deltatest.Row{deltatest.Point(t, 1, 2), deltatest.Point(t, 3, 4)}, []deltatest.Row{deltatest.Point(t, 5, 6)})
	r := runCLI(t, "", false, "validate", "--delta", good)
	require.Equal(t, exitOK, r.Code, r.Stdout+r.Stderr)
	assert.Contains(t, r.Stdout, good+": 3 rows, ok")

	broken := deltatest.Point(t, 7, 8)
	broken.WKB = broken.WKB[:len(broken.WKB)-8]
	bad, _ := newDeltaPoints(t, deltatest.Options{}, []deltatest.Row{deltatest.Point(t, 1, 2), broken})
	r = runCLI(t, "", false, "validate", "--delta", bad)
	require.Equal(t, exitViolation, r.Code, r.Stdout+r.Stderr)
	assert.Contains(t, r.Stdout, "1 violations")
	assert.Contains(t, r.Stdout, "wkb.truncated")
	assert.Contains(t, r.Stdout, "fa.parquet: ", "the finding names the file")
	assert.Empty(t, r.Stderr)

	r = runCLI(t, "", false, "--json", "validate", "--delta", bad)
	require.Equal(t, exitViolation, r.Code)
	var res validateResult
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &res))
	require.Len(t, res.Inputs, 1)
	assert.Equal(t, bad, res.Inputs[0].Input)
	assert.Equal(t, int64(1), res.Inputs[0].SnapshotID, "the Delta version")
	assert.Equal(t, int64(1), res.Inputs[0].Violations)
}

func TestValidateDeltaBadInput(t *testing.T) {
	r := runCLI(t, "", false, "validate", "--delta", t.TempDir())
	assert.Equal(t, exitError, r.Code)
	assert.Contains(t, r.Stderr, "not a Delta table")
	assert.Contains(t, r.Stderr, "_delta_log")

	r = runCLI(t, "", false, "validate", "--delta", t.TempDir(), "--table", "a.b")
	assert.Equal(t, exitUsage, r.Code)
	assert.Contains(t, r.Stderr, "one of")

	// A golden table without a geometry column is a finding, not an error.
	r = runCLI(t, "", false, "validate", "--delta", testenv.DeltaGolden(t)+"/basic-with-inserts-deletes-checkpoint")
	assert.Equal(t, exitViolation, r.Code)
	assert.Contains(t, r.Stdout, "geometry.column")
}
