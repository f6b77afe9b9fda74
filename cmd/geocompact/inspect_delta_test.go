package main

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/delta/deltatest"
	"github.com/geocompact/geocompact/internal/testing/testenv"
)

func TestInspectDeltaFiles(t *testing.T) {
	t.Parallel()
	p := func(x, y float64) deltatest.Row { return deltatest.Point(t, x, y) }
	dir, _ := newDeltaPoints(t, deltatest.Options{Partitioned: true},
		[]deltatest.Row{p(0, 0), p(1, 1)}, []deltatest.Row{p(2, 2), p(3, 3), p(4, 4)})
	r := runCLI(t, "", false, "inspect", "files", "--delta", dir)
	require.Equal(t, exitOK, r.Code, r.Stderr)
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	require.Len(t, lines, 3, r.Stdout)
	assert.Equal(t, []string{"FILE", "PARTITION", "RECORDS", "SIZE", "BBOX", "DELETED", "ROWS"}, strings.Fields(lines[0]))
	assert.Equal(t, "part=p/fa.parquet", strings.Fields(lines[1])[0], "the full path when piped")
	assert.Equal(t, []string{"part=p", "2"}, strings.Fields(lines[1])[1:3])
	assert.Equal(t, []string{"part=p", "3"}, strings.Fields(lines[2])[1:3])

	r = runCLI(t, "", true, "inspect", "files", "--delta", dir)
	require.Equal(t, exitOK, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "fb.parquet")
	assert.NotContains(t, r.Stdout, "part=p/fb.parquet", "the base name on a terminal")

	r = runCLI(t, "", false, "--json", "inspect", "files", "--delta", dir)
	require.Equal(t, exitOK, r.Code, r.Stderr)
	var rows []map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &rows))
	require.Len(t, rows, 2)
	assert.Equal(t, map[string]any{"minx": 2.0, "miny": 2.0, "maxx": 4.0, "maxy": 4.0}, rows[1]["bbox"])
	assert.Equal(t, 3.0, rows[1]["record_count"])
}

func TestInspectDeltaHistory(t *testing.T) {
	t.Parallel()
	r := runCLI(t, "", false, "inspect", "history", "--delta", filepath.Join(testenv.DeltaGolden(t), "basic-with-inserts-deletes-checkpoint"))
	require.Equal(t, exitOK, r.Code, r.Stderr)
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	require.Len(t, lines, 15, "a header and versions 0 to 13")
	for i, l := range lines[1:] {
		assert.Equal(t, strconv.Itoa(i), strings.Fields(l)[0], "in version order")
	}
	assert.Contains(t, lines[6], "DELETE")
	assert.Contains(t, lines[6], `"numDeletedRows":"5"`)

	r = runCLI(t, "", false, "--json", "inspect", "history", "--delta", filepath.Join(testenv.DeltaGolden(t), "basic-with-inserts-deletes-checkpoint"))
	require.Equal(t, exitOK, r.Code, r.Stderr)
	var rows []map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &rows))
	require.Len(t, rows, 14)
	assert.Equal(t, "WRITE", rows[13-3]["operation"])
	assert.Equal(t, map[string]any{"mode": "Append", "partitionBy": "[]"}, rows[0]["operation_parameters"])
}

func TestInspectDeltaSchemaAndUsage(t *testing.T) {
	t.Parallel()
	dir, _ := newDeltaPoints(t, deltatest.Options{Covering: true}, []deltatest.Row{deltatest.Point(t, 1, 1)})
	r := runCLI(t, "", false, "inspect", "schema", "--delta", dir)
	require.Equal(t, exitOK, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "(delta (reader v1, writer v2))")
	assert.Contains(t, r.Stdout, "bbox.xmin, bbox.ymin, bbox.xmax, bbox.ymax")

	r = runCLI(t, "", false, "inspect", "snapshots", "--delta", dir)
	assert.Equal(t, exitUsage, r.Code)
	assert.Contains(t, r.Stderr, "schema, files and history")

	r = runCLI(t, "", false, "inspect", "files")
	assert.Equal(t, exitUsage, r.Code)
	assert.Contains(t, r.Stderr, "--delta")
	r = runCLI(t, "", false, "inspect", "files", "--delta", dir, "--table", "a.b")
	assert.Equal(t, exitUsage, r.Code)

	r = runCLI(t, "", false, "inspect", "files", "--delta", t.TempDir())
	assert.Equal(t, exitError, r.Code)
	assert.Contains(t, r.Stderr, "not a Delta table")
}
