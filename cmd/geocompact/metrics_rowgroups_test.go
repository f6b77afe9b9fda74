package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/delta/deltatest"
)

// rowGroupsDelta is a Delta table of three partitions, one file of four
// row groups each: s cut along the diagonal, u interleaved (every row
// group spans most of its file) and n cut as s, written without Parquet
// statistics.
func rowGroupsDelta(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	tbl := deltatest.Create(t, dir, deltatest.Options{Partitioned: true})
	var sorted, interleaved []deltatest.Row
	for i := range 8 {
		sorted = append(sorted, deltatest.Point(t, float64(i), float64(i)))
		j := float64(i / 2)
		if i%2 == 1 {
			j = 7 - j
		}
		interleaved = append(interleaved, deltatest.Point(t, j, j))
	}
	pairs := parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(2))
	bare := parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(2), parquet.WithStats(false))
	deltatest.Append(t, tbl,
		deltatest.WriteFileWith(t, tbl, pairs, "s.parquet", "s", 0, sorted...),
		deltatest.WriteFileWith(t, tbl, pairs, "u.parquet", "u", 8, interleaved...),
		deltatest.WriteFileWith(t, tbl, bare, "n.parquet", "n", 16, sorted...))
	return dir
}

// TestMetricsRowGroups: text, JSON and Prometheus outputs carry the
// row-group figures, a partition whose footers lack bbox statistics shows
// its area as unknown ("-", null, no sample), and --row-groups=false
// reads no footer.
func TestMetricsRowGroups(t *testing.T) {
	t.Parallel()
	dir := rowGroupsDelta(t)
	windows := filepath.Join(t.TempDir(), "w.json")
	require.NoError(t, os.WriteFile(windows, []byte(`[{"minx":2.5,"miny":2.5,"maxx":3.5,"maxy":3.5}]`), 0o644))

	r := runCLI(t, "", false, "metrics", "--delta", dir, "--windows", windows)
	require.Equal(t, exitOK, r.Code, r.Stderr)
	assert.Regexp(t, `(?m)^TABLE .*DELETE FILES\s+ROW GROUPS\s+RG AREA\s+RG READ$`, r.Stdout)
	assert.Regexp(t, `(?m)^\S+\s+3\s+.*\s+12\s+0\.224\s+9\.00$`, r.Stdout, "(4/49 + 84/49) / 8 row groups")
	assert.Regexp(t, `(?m)^PARTITION .*PLANNED PER WINDOW\s+ROW GROUPS\s+RG AREA\s+RG READ$`, r.Stdout)
	assert.Regexp(t, `(?m)^part=s\s.*\s1\.00\s+4\s+0\.020\s+1\.00$`, r.Stdout)
	assert.Regexp(t, `(?m)^part=u\s.*\s1\.00\s+4\s+0\.429\s+4\.00$`, r.Stdout)
	assert.Regexp(t, `(?m)^part=n\s.*\s1\.00\s+4\s+-\s+4\.00$`, r.Stdout)

	r = runCLI(t, "", false, "--json", "metrics", "--delta", dir)
	require.Equal(t, exitOK, r.Code, r.Stderr)
	var doc struct {
		RowGroups  map[string]any `json:"row_groups"`
		Partitions []struct {
			Partition string
			Layout    struct {
				RowGroups map[string]any `json:"row_groups"`
			}
		}
	}
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &doc))
	require.IsType(t, 0.0, doc.RowGroups["area"])
	assert.InDelta(t, (4.0+84)/8/49, doc.RowGroups["area"], 1e-12)
	delete(doc.RowGroups, "area")
	assert.Equal(t, map[string]any{"count": 12.0, "files_without_bounds": 1.0}, doc.RowGroups)
	require.Len(t, doc.Partitions, 3)
	assert.Equal(t, "part=n", doc.Partitions[0].Partition)
	assert.Equal(t, map[string]any{"count": 4.0, "files_without_bounds": 1.0, "area": nil}, doc.Partitions[0].Layout.RowGroups,
		"unknown, not 0")

	r = runCLI(t, "", false, "metrics", "--delta", dir, "--windows", windows, "--format", "prometheus")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	got := map[string]float64{}
	for _, s := range parsePrometheus(t, r.Stdout) {
		got[s.name+"/"+s.labels["partition"]] = s.value
	}
	for k, v := range map[string]float64{
		"geocompact_table_row_group_count/":                             12,
		"geocompact_table_row_group_area_ratio/":                        88.0 / 8 / 49,
		"geocompact_table_row_group_unbounded_files/":                   1,
		"geocompact_table_window_read_mean_row_groups/":                 9,
		"geocompact_table_partition_row_group_count/part=s":             4,
		"geocompact_table_partition_row_group_area_ratio/part=s":        1.0 / 49,
		"geocompact_table_partition_row_group_area_ratio/part=u":        84.0 / 4 / 49,
		"geocompact_table_partition_row_group_unbounded_files/part=n":   1,
		"geocompact_table_partition_window_read_mean_row_groups/part=s": 1,
		"geocompact_table_partition_window_read_mean_row_groups/part=u": 4,
		"geocompact_table_partition_window_read_mean_row_groups/part=n": 4,
	} {
		require.Contains(t, got, k)
		assert.InDelta(t, v, got[k], 1e-12, k)
	}
	assert.NotContains(t, got, "geocompact_table_partition_row_group_area_ratio/part=n", "an unknown area has no sample")

	for _, format := range []string{"json", "prometheus", "text"} {
		r = runCLI(t, "", false, "metrics", "--delta", dir, "--row-groups=false", "--format", format)
		require.Equal(t, exitOK, r.Code, r.Stderr)
		assert.NotContains(t, r.Stdout, "row_group", format)
		if format == "text" {
			assert.Regexp(t, `(?m)^part=s\s.*\s1\s+-\s+-\s+-\s+-$`, r.Stdout, "no windows, no footer read")
		}
	}
}
