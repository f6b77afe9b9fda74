package bench

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/spatial"
)

// TestRowGroupFigures measures an unsorted copy and a Hilbert rewrite of
// one table whose files hold several row groups: every window reads a row
// group for each file holding a matching row, never more than the planned
// files hold, and the Hilbert files' row groups are tighter.
func TestRowGroupFigures(t *testing.T) {
	t.Parallel()
	cat := newCatalog(t)
	generateSmall(t, cat, "b.rg", 6000, 30)
	rep, err := Run(t.Context(), cat, Config{Table: "b.rg", Layouts: []Layout{Unsorted, Layout("hilbert")},
		WindowConfig: WindowConfig{Count: 40, Seed: 2}, Options: map[string]string{engine.OptTargetFileSize: "60000"}})
	require.NoError(t, err)
	require.Len(t, rep.Layouts, 2)
	area := map[Layout]float64{}
	for _, lr := range rep.Layouts {
		require.NotNil(t, lr.RowGroupArea, "%s: row groups of known boxes", lr.Layout)
		assert.Greater(t, lr.RowGroups, lr.Files, "%s: several row groups a file", lr.Layout)
		assert.Greater(t, *lr.RowGroupArea, 0.0)
		assert.LessOrEqual(t, *lr.RowGroupArea, 1.0)
		area[lr.Layout] = *lr.RowGroupArea
		for i, w := range lr.PerWindow {
			assert.LessOrEqual(t, w.RowGroupBytesRead, w.PlannedBytes, "%s window %d", lr.Layout, i)
			assert.GreaterOrEqual(t, w.RowGroupsRead, w.FilesWithMatches, "%s window %d: a row group per file with a match", lr.Layout, i)
		}
		assert.Positive(t, lr.MeanRowGroupsRead)
	}
	assert.Less(t, area[Layout("hilbert")], area[Unsorted], "a sorted file's row groups are tighter")
}

// TestRowGroupBoxes cuts a file's row boxes at its row groups, and reads
// a file whose row groups' boxes are unknown whole.
func TestRowGroupBoxes(t *testing.T) {
	t.Parallel()
	pt := func(x, y float64) spatial.Bound { return spatial.Bound{MinX: x, MinY: y, MaxX: x, MaxY: y} }
	rows := []spatial.Bound{pt(0, 0), pt(1, 1), pt(10, 10), pt(11, 12)}
	gs := boundRowGroups([]rowGroup{{rows: 2, bytes: 100}, {rows: 2, bytes: 50}}, rows)
	require.Len(t, gs, 2)
	assert.Equal(t, spatial.Bound{MinX: 0, MinY: 0, MaxX: 1, MaxY: 1}, gs[0].bound)
	assert.Equal(t, spatial.Bound{MinX: 10, MinY: 10, MaxX: 11, MaxY: 12}, gs[1].bound)
	f := fileInfo{size: 200, rowGroups: 2, groups: gs}
	n, b := rowGroupsRead(f, spatial.Bound{MinX: 9, MinY: 9, MaxX: 20, MaxY: 20})
	assert.Equal(t, 1, n)
	assert.Equal(t, int64(50), b)
	a, ok := rowGroupArea([]fileInfo{f})
	require.True(t, ok)
	assert.InDelta(t, (1.0+2.0)/2/(11*12), a, 1e-12)

	// Deletes applied: three rows read of the four the footer counts.
	assert.Nil(t, boundRowGroups([]rowGroup{{rows: 2}, {rows: 2}}, rows[:3]))
	n, b = rowGroupsRead(fileInfo{size: 200, rowGroups: 2}, spatial.Bound{MinX: 9, MinY: 9, MaxX: 20, MaxY: 20})
	assert.Equal(t, 2, n)
	assert.Equal(t, int64(200), b)
}
