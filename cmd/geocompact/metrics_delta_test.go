package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/delta/deltatest"
	"github.com/geocompact/geocompact/engine/maintain"
)

func TestMetricsDelta(t *testing.T) {
	p := func(x, y float64) deltatest.Row { return deltatest.Point(t, x, y) }
	// Boxes [0 0 1 1], [2 2 3 3] and [10 10 11 11].
	dir, _ := newDeltaPoints(t, deltatest.Options{},
		[]deltatest.Row{p(0, 0), p(1, 1)}, []deltatest.Row{p(2, 2), p(3, 3)}, []deltatest.Row{p(10, 10), p(11, 11)})
	windows := filepath.Join(t.TempDir(), "w.json")
	// The first window touches the first two files, the second only the
	// third: 1.5 files per window.
	require.NoError(t, os.WriteFile(windows, []byte(`[{"minx":0.5,"miny":0.5,"maxx":2,"maxy":2},{"minx":10.5,"miny":10.5,"maxx":20,"maxy":20}]`), 0o644))

	r := runCLI(t, "", false, "--json", "metrics", "--delta", dir, "--windows", windows)
	require.Equal(t, exitOK, r.Code, r.Stderr)
	var m maintain.TableMetrics
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &m))
	assert.Equal(t, int64(3), m.FileCount)
	assert.Equal(t, int64(6), m.TotalRecords)
	assert.Equal(t, 2, m.SnapshotCount)
	require.Len(t, m.Partitions, 1)
	assert.Empty(t, m.Partitions[0].Partition, "unpartitioned")
	l := m.Partitions[0].Layout
	require.NotNil(t, l)
	require.NotNil(t, l.MeanFilesPlanned)
	assert.InDelta(t, 1.5, *l.MeanFilesPlanned, 1e-9)
	assert.Equal(t, 1, l.MaxOverlapDepth)

	r = runCLI(t, "", false, "metrics", "--delta", dir, "--format", "prometheus", "--windows", windows)
	require.Equal(t, exitOK, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, `geocompact_table_partition_window_planned_mean_files{table="`+promEscapeLabel(dir)+`",partition=""} 1.5`)
}

func TestMetricsDeltaGolden(t *testing.T) {
	r := runCLI(t, "", false, "metrics", "--delta", filepath.Join(goldenDelta, "dv-partitioned-with-checkpoint"))
	require.Equal(t, exitOK, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "part=9")

	r = runCLI(t, "", false, "--json", "metrics", "--delta", filepath.Join(goldenDelta, "dv-partitioned-with-checkpoint"))
	require.Equal(t, exitOK, r.Code, r.Stderr)
	var m maintain.TableMetrics
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &m))
	assert.Equal(t, int64(15), m.FileCount)
	assert.Len(t, m.Partitions, 10)
	assert.Equal(t, 16, m.SnapshotCount, "versions 0 to 15 are all in the log")
	assert.Positive(t, m.DeleteFileCount)

	r = runCLI(t, "", false, "metrics", "--delta", "x", "--table", "a.b")
	assert.Equal(t, exitUsage, r.Code)
}
