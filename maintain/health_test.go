package maintain_test

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/internal/testing/enginetest"
	"github.com/geocompact/geocompact/maintain"
	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/table/catalogs"
)

// appendFilesOf appends the rows of each data file of table src to table
// dst, one commit per file: arrivals that span the map.
func appendFilesOf(t *testing.T, cat catalog.Catalog, dst, src string) {
	t.Helper()
	from, err := catalogs.LoadTable(t.Context(), cat, src)
	require.NoError(t, err)
	tasks, err := from.Scan().PlanFiles(t.Context())
	require.NoError(t, err)
	for _, task := range tasks {
		to, err := catalogs.LoadTable(t.Context(), cat, dst)
		require.NoError(t, err)
		sc, recs, err := from.Scan().ReadTasks(t.Context(), []table.FileScanTask{task})
		require.NoError(t, err)
		rdr := array.ReaderFromIter(sc, recs)
		_, err = to.Append(t.Context(), rdr, nil)
		rdr.Release()
		require.NoError(t, err)
	}
}

// layoutOf returns the layout health of tbl's only partition.
func layoutOf(t *testing.T, cat catalog.Catalog, name string, windows []spatial.Bound) maintain.LayoutHealth {
	t.Helper()
	m, err := maintain.MetricsWindows(t.Context(), load(t, cat, name), windows)
	require.NoError(t, err)
	require.Len(t, m.Partitions, 1)
	require.NotNil(t, m.Partitions[0].Layout)
	require.NotNil(t, m.Partitions[0].Layout.MeanFilesPlanned)
	return *m.Partitions[0].Layout
}

// gridWindows are 100 windows of 1% of the world's area on a grid.
func gridWindows() []spatial.Bound {
	var out []spatial.Bound
	for i := range 10 {
		for j := range 10 {
			x, y := -180+36*float64(i), -90+18*float64(j)
			out = append(out, spatial.Bound{MinX: x, MinY: y, MaxX: x + 36, MaxY: y + 18})
		}
	}
	return out
}

func TestLayoutHealthDecaysAndRecovers(t *testing.T) {
	t.Parallel()
	cat, err := catalogs.Open(t.Context(), catalogs.Spec{Warehouse: t.TempDir()})
	require.NoError(t, err)
	generatedTable(t, cat, bench.GenerateConfig{Table: "h.t", Rows: 20000, Commits: 24, Distribution: bench.Clustered, Seed: 1})
	generatedTable(t, cat, bench.GenerateConfig{Table: "h.new", Rows: 1500, Commits: 6, Distribution: bench.Clustered, Seed: 1})
	ws := gridWindows()
	sortAll := func() {
		t.Helper()
		_, err := enginetest.Rewrite(t.Context(), cat, "h.t", engine.Request{Curve: "hilbert", Options: map[string]string{
			engine.OptRewriteAll: "true", engine.OptTargetFileSize: "40000"}})
		require.NoError(t, err)
	}

	arrival := layoutOf(t, cat, "h.t", ws)
	sortAll()
	sorted := layoutOf(t, cat, "h.t", ws)
	appendFilesOf(t, cat, "h.t", "h.new")
	decayed := layoutOf(t, cat, "h.t", ws)
	sortAll()
	recovered := layoutOf(t, cat, "h.t", ws)
	t.Logf("mean depth / max depth / planned: arrival %.2f/%d/%.2f, sorted %.2f/%d/%.2f, after appends %.2f/%d/%.2f, re-sorted %.2f/%d/%.2f",
		arrival.MeanOverlapDepth, arrival.MaxOverlapDepth, *arrival.MeanFilesPlanned, sorted.MeanOverlapDepth, sorted.MaxOverlapDepth, *sorted.MeanFilesPlanned,
		decayed.MeanOverlapDepth, decayed.MaxOverlapDepth, *decayed.MeanFilesPlanned, recovered.MeanOverlapDepth, recovered.MaxOverlapDepth, *recovered.MeanFilesPlanned)

	assert.Equal(t, 24, arrival.MaxOverlapDepth, "24 arrival files all span the map")
	assert.Less(t, sorted.MeanOverlapDepth, arrival.MeanOverlapDepth/4)
	assert.Less(t, *sorted.MeanFilesPlanned, *arrival.MeanFilesPlanned/2)
	// Six arrivals spanning the map add about six to every depth.
	assert.GreaterOrEqual(t, decayed.MaxOverlapDepth, sorted.MaxOverlapDepth+6)
	assert.Greater(t, decayed.MeanOverlapDepth, sorted.MeanOverlapDepth+3)
	assert.Greater(t, *decayed.MeanFilesPlanned, *sorted.MeanFilesPlanned+3)
	// A re-sort brings them back down.
	assert.Less(t, recovered.MeanOverlapDepth, decayed.MeanOverlapDepth-3)
	assert.Less(t, *recovered.MeanFilesPlanned, *decayed.MeanFilesPlanned-3)
	assert.Zero(t, recovered.FilesWithoutBounds)
}

func TestLayout(t *testing.T) {
	t.Parallel()
	boxes := []spatial.Bound{{MinX: 0, MinY: 0, MaxX: 1, MaxY: 1}, {MinX: 2, MinY: 2, MaxX: 3, MaxY: 3}, maintain.Unbounded}
	l := maintain.Layout(boxes, []spatial.Bound{{MinX: 1, MinY: 1, MaxX: 2, MaxY: 2}})
	assert.Equal(t, int64(1), l.FilesWithoutBounds)
	assert.Equal(t, 2, l.MaxOverlapDepth)
	require.NotNil(t, l.MeanFilesPlanned)
	assert.InDelta(t, 3.0, *l.MeanFilesPlanned, 1e-9, "touching boxes are planned")
	assert.Nil(t, maintain.Layout(boxes, nil).MeanFilesPlanned)
}
