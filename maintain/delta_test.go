package maintain_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/delta/deltatest"
	"github.com/geocompact/geocompact/maintain"
	"github.com/geocompact/geocompact/spatial"
)

func TestDeltaMetrics(t *testing.T) {
	t.Parallel()
	for _, opts := range []deltatest.Options{{}, {Covering: true, ColumnMapping: "name"}} {
		tbl := deltatest.Create(t, t.TempDir(), opts)
		p := func(x, y float64) deltatest.Row { return deltatest.Point(t, x, y) }
		a := deltatest.WriteFile(t, tbl, "a.parquet", "", 0, p(0, 0), p(1, 1))         // [0 0 1 1]
		b := deltatest.WriteFile(t, tbl, "b.parquet", "", 2, p(2, 2), p(3, 3))         // [2 2 3 3]
		c := deltatest.WriteFile(t, tbl, "c.parquet", "", 4, p(0.5, 0.5), p(2.5, 2.5)) // [.5 .5 2.5 2.5]
		d := deltatest.WriteFile(t, tbl, "d.parquet", "", 6, p(9, 9))
		d.Stats = "" // no statistics: planned for every window
		deltatest.Append(t, tbl, a, b, c, d)
		deltatest.DeleteRows(t, tbl, b, 0)

		windows := []spatial.Bound{{MinX: 0, MinY: 0, MaxX: 0.6, MaxY: 0.6}, {MinX: 10, MinY: 10, MaxX: 11, MaxY: 11}}
		m, err := maintain.DeltaMetrics(t.Context(), tbl, windows)
		require.NoError(t, err)
		assert.Equal(t, int64(4), m.FileCount)
		assert.Equal(t, a.Size+b.Size+c.Size+d.Size, m.TotalBytes)
		assert.Equal(t, int64(6), m.TotalRecords, "d has no stats, so no record count; deletes are not subtracted")
		assert.Equal(t, int64(1), m.DeleteFileCount, "one file carries a deletion vector")
		// The vector deletes one of the table's 6 counted records.
		require.NotNil(t, m.Deletes)
		assert.Equal(t, maintain.DeleteDebt{DeletionVectors: 1, DeletedRecords: 1, DeleteBytes: m.Deletes.DeleteBytes,
			DeletedFraction: 1.0 / 6}, *m.Deletes)
		assert.Positive(t, m.Deletes.DeleteBytes)
		assert.Equal(t, 3, m.SnapshotCount)
		assert.Zero(t, m.ManifestCount)
		require.Len(t, m.Partitions, 1)
		assert.Equal(t, m.Deletes, m.Partitions[0].Deletes, "the one partition holds the table's debt")
		l := m.Partitions[0].Layout
		require.NotNil(t, l, "%+v", opts)
		assert.Equal(t, int64(1), l.FilesWithoutBounds)
		assert.Equal(t, 3, l.MaxOverlapDepth)
		require.NotNil(t, l.MeanFilesPlanned)
		// The first window plans a, c and d; the second only d.
		assert.InDelta(t, 2.0, *l.MeanFilesPlanned, 1e-9)
	}
}

func TestDeltaMetricsPartitionsWithoutBBox(t *testing.T) {
	t.Parallel()
	tbl := deltatest.Create(t, t.TempDir(), deltatest.Options{Partitioned: true, NoBBox: true})
	deltatest.Append(t, tbl,
		deltatest.WriteFile(t, tbl, "a.parquet", "x", 0, deltatest.Point(t, 0, 0)),
		deltatest.WriteFile(t, tbl, "b.parquet", "x", 1, deltatest.Point(t, 0, 0)),
		deltatest.WriteFile(t, tbl, "c.parquet", "y", 2, deltatest.Point(t, 0, 0)))
	m, err := maintain.DeltaMetrics(t.Context(), tbl, nil)
	require.NoError(t, err)
	require.Len(t, m.Partitions, 2)
	assert.Equal(t, "part=x", m.Partitions[0].Partition)
	assert.Equal(t, int64(2), m.Partitions[0].FileCount)
	assert.Equal(t, "part=y", m.Partitions[1].Partition)
	assert.Nil(t, m.Partitions[0].Layout, "no bbox columns, no layout figures")
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
