package bench

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/engine"
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
