package bench

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/spatial/geoparquettest"
)

// TestGenerateWritesGeoParquet checks that every file Generate writes is
// valid GeoParquet 1.1 stating its own rows' types, on a partitioned v2
// table and a v3 table.
func TestGenerateWritesGeoParquet(t *testing.T) {
	t.Parallel()
	cases := []GenerateConfig{
		{Table: "g.lines", Rows: 900, Commits: 3, Geometry: Lines, PartitionBy: "day(ts)", Seed: 3},
		{Table: "g.v3", Rows: 600, Commits: 2, Geometry: Polygons, FormatVersion: 3, Seed: 4},
	}
	for _, cfg := range cases {
		t.Run(cfg.Table, func(t *testing.T) {
			cat := newCatalog(t)
			res, err := Generate(t.Context(), cat, cfg)
			require.NoError(t, err)
			tbl, err := cat.LoadTable(t.Context(), []string{"g", cfg.Table[2:]})
			require.NoError(t, err)
			tasks, err := tbl.Scan().PlanFiles(t.Context())
			require.NoError(t, err)
			require.Len(t, tasks, res.DataFiles)
			var rows int64
			for _, task := range tasks {
				got := geoparquettest.Check(t, task.File.FilePath())
				assert.Equal(t, got.Types, got.Declared)
				assert.NotEmpty(t, got.BBox)
				rows += got.Rows
			}
			assert.Equal(t, cfg.Rows, rows)
			if cfg.FormatVersion == 3 {
				checkRowIDs(t, tbl, cfg.Rows)
			}
		})
	}
}

// checkRowIDs checks that a v3 table's rows have the row ids 0..n-1, each
// once: appended files got first row ids that do not overlap.
func checkRowIDs(t *testing.T, tbl *table.Table, n int64) {
	t.Helper()
	_, recs, err := tbl.Scan(table.WithRowLineage()).ToArrowRecords(t.Context())
	require.NoError(t, err)
	seen := map[int64]bool{}
	for rec, err := range recs {
		require.NoError(t, err)
		idx := rec.Schema().FieldIndices(iceberg.RowIDColumnName)
		require.Len(t, idx, 1)
		ids := rec.Column(idx[0]).(*array.Int64)
		for i := range ids.Len() {
			require.False(t, seen[ids.Value(i)], "row id %d twice", ids.Value(i))
			seen[ids.Value(i)] = true
		}
		rec.Release()
	}
	assert.Len(t, seen, int(n))
	for id := range n {
		assert.True(t, seen[id], "row id %d", id)
	}
}
