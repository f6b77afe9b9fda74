package maintain_test

import (
	"encoding/json"
	"testing"

	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/internal/testing/enginetest"
	"github.com/geocompact/geocompact/maintain"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/table/icebergtable"
)

// TestMeasureRowGroups rewrites two copies of one arrival table into
// files of several row groups, one sorted along a Hilbert curve and one
// bin-packed: the sorted files' row groups cover less of their files,
// and windows read fewer of them. Without RowGroups no footer is read.
func TestMeasureRowGroups(t *testing.T) {
	t.Parallel()
	cat, err := catalogs.Open(t.Context(), catalogs.Spec{Warehouse: t.TempDir()})
	require.NoError(t, err)
	props := map[string]string{table.ParquetRowGroupLimitKey: "200"}
	ws := gridWindows()
	measure := func(name string, req engine.Request) *maintain.TableMetrics {
		t.Helper()
		generatedTable(t, cat, bench.GenerateConfig{Table: name, Rows: 6000, Commits: 3, Distribution: bench.Clustered, Seed: 4, Properties: props})
		req.Options = map[string]string{engine.OptRewriteAll: "true", engine.OptTargetFileSize: "60000"}
		_, err := enginetest.Rewrite(t.Context(), cat, name, req)
		require.NoError(t, err)
		tbl, err := icebergtable.Open(t.Context(), cat, name)
		require.NoError(t, err)
		m, err := maintain.Measure(t.Context(), tbl, maintain.MeasureConfig{Windows: ws, RowGroups: true})
		require.NoError(t, err)
		require.NotNil(t, m.RowGroups, name)
		require.Len(t, m.Partitions, 1)
		require.NotNil(t, m.Partitions[0].Layout)
		assert.Equal(t, m.RowGroups, m.Partitions[0].Layout.RowGroups, "%s: one partition, the table's figures", name)
		assert.Greater(t, m.RowGroups.Count, m.FileCount, "%s: several row groups a file", name)
		assert.Zero(t, m.RowGroups.FilesWithoutBounds, name)
		require.NotNil(t, m.RowGroups.Area, name)
		assert.Greater(t, *m.RowGroups.Area, 0.0)
		assert.LessOrEqual(t, *m.RowGroups.Area, 1.0)
		require.NotNil(t, m.RowGroups.MeanRead, name)
		assert.LessOrEqual(t, *m.RowGroups.MeanRead, float64(m.RowGroups.Count))
		return m
	}
	sorted := measure("rg.sorted", engine.Request{Curve: "hilbert"})
	packed := measure("rg.packed", engine.Request{})
	t.Logf("row groups / area / read per window: sorted %d/%.3f/%.2f, bin-packed %d/%.3f/%.2f",
		sorted.RowGroups.Count, *sorted.RowGroups.Area, *sorted.RowGroups.MeanRead,
		packed.RowGroups.Count, *packed.RowGroups.Area, *packed.RowGroups.MeanRead)
	assert.Less(t, *sorted.RowGroups.Area, *packed.RowGroups.Area/2, "a sorted rewrite cuts tighter row groups")
	assert.Less(t, *sorted.RowGroups.MeanRead, *packed.RowGroups.MeanRead)

	b, err := json.Marshal(sorted)
	require.NoError(t, err)
	var doc struct {
		RowGroups  map[string]any `json:"row_groups"`
		Partitions []struct {
			Layout struct {
				RowGroups map[string]any `json:"row_groups"`
			} `json:"layout"`
		} `json:"partitions"`
	}
	require.NoError(t, json.Unmarshal(b, &doc))
	for _, rg := range []map[string]any{doc.RowGroups, doc.Partitions[0].Layout.RowGroups} {
		assert.ElementsMatch(t, []string{"count", "files_without_bounds", "area", "mean_read"}, keys(rg))
	}

	m, err := maintain.Metrics(t.Context(), load(t, cat, "rg.sorted"))
	require.NoError(t, err)
	assert.Nil(t, m.RowGroups, "metadata only")
	assert.Nil(t, m.Partitions[0].Layout.RowGroups)
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
