package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/delta/deltatest"
	"github.com/geocompact/geocompact/internal/testing/testenv"
	"github.com/geocompact/geocompact/maintain"
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

	assert.Contains(t, r.Stdout, `"version_count": 2`)
	assert.Contains(t, r.Stdout, `"oldest_version_age_seconds"`)
	assert.Contains(t, r.Stdout, `"current_version_age_seconds"`)
	assert.NotContains(t, r.Stdout, "snapshot")

	r = runCLI(t, "", false, "metrics", "--delta", dir, "--format", "prometheus", "--windows", windows)
	require.Equal(t, exitOK, r.Code, r.Stderr)
	label := `{table="` + promEscapeLabel(dir) + `"`
	assert.Contains(t, r.Stdout, `geocompact_table_partition_window_planned_mean_files`+label+`,partition=""} 1.5`)
	assert.Contains(t, r.Stdout, "geocompact_table_version_count"+label+"} 2\n")
	assert.Contains(t, r.Stdout, "# TYPE geocompact_table_oldest_version_age_seconds gauge\n")
	assert.Contains(t, r.Stdout, "# TYPE geocompact_table_current_version_age_seconds gauge\n")
	assert.NotContains(t, r.Stdout, "snapshot")
	samples := parsePrometheus(t, r.Stdout)
	assert.NotEmpty(t, samples)

	r = runCLI(t, "", false, "metrics", "--delta", dir)
	require.Equal(t, exitOK, r.Code, r.Stderr)
	assert.Regexp(t, `RECORDS +VERSIONS +OLDEST VERSION AGE +CURRENT VERSION AGE +MANIFESTS`, r.Stdout)
	assert.NotContains(t, r.Stdout, "SNAPSHOT")
}

// TestMetricsPrometheusNames: the same figures of an Iceberg and a Delta
// table differ only in the history families' names and in the help of
// the families promDelta describes for Delta; the Iceberg output is as
// before.
func TestMetricsPrometheusNames(t *testing.T) {
	m := &maintain.TableMetrics{FileCount: 2, SnapshotCount: 4, OldestSnapshotAgeSeconds: 9, CurrentSnapshotAgeSeconds: 1,
		Partitions: []maintain.PartitionMetrics{{Partition: "p=1", FileCount: 2}}}
	var ice, del strings.Builder
	require.NoError(t, writePrometheus(&ice, "t", m))
	d := *m
	d.Format = maintain.FormatDelta
	require.NoError(t, writePrometheus(&del, "t", &d))

	assert.Contains(t, ice.String(), "# HELP geocompact_table_snapshot_count Snapshots kept in the table metadata.\n"+
		"# TYPE geocompact_table_snapshot_count gauge\ngeocompact_table_snapshot_count{table=\"t\"} 4\n")
	assert.Contains(t, ice.String(), "geocompact_table_oldest_snapshot_age_seconds{table=\"t\"} 9\n")
	assert.NotContains(t, ice.String(), "version")
	assert.Contains(t, del.String(), "# HELP geocompact_table_version_count Versions whose commits are still in the Delta log.\n"+
		"# TYPE geocompact_table_version_count gauge\ngeocompact_table_version_count{table=\"t\"} 4\n")
	assert.Contains(t, del.String(), "geocompact_table_oldest_version_age_seconds{table=\"t\"} 9\n")
	assert.Contains(t, del.String(), "geocompact_table_current_version_age_seconds{table=\"t\"} 1\n")
	assert.NotContains(t, del.String(), "snapshot")

	iceLines, delLines := strings.Split(ice.String(), "\n"), strings.Split(del.String(), "\n")
	require.Len(t, delLines, len(iceLines), "the same families, in the same order")
	differ := 0
	for i := range iceLines {
		if iceLines[i] != delLines[i] {
			differ++
			assert.Regexp(t, `^(# HELP |# TYPE )?geocompact_table_(file_count|snapshot_count|oldest_snapshot_age_seconds|current_snapshot_age_seconds|manifest_count|delete_file_count)[ {]`, iceLines[i])
		}
	}
	assert.Equal(t, 3*3+3, differ, "three families renamed (3 lines each), three helps reworded")
}

func TestMetricsDeltaGolden(t *testing.T) {
	r := runCLI(t, "", false, "metrics", "--delta", filepath.Join(testenv.DeltaGolden(t), "dv-partitioned-with-checkpoint"))
	require.Equal(t, exitOK, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "part=9")

	r = runCLI(t, "", false, "--json", "metrics", "--delta", filepath.Join(testenv.DeltaGolden(t), "dv-partitioned-with-checkpoint"))
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
