package bench

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/internal/testing/enginetest"
	"github.com/geocompact/geocompact/table/catalogs"
)

func TestBenchCurrentAndArrivalAfterCompaction(t *testing.T) {
	t.Parallel()
	cat := newCatalog(t)
	generateSmall(t, cat, "b.pings", 6000, 40)
	_, err := enginetest.Rewrite(t.Context(), cat, "b.pings", engine.Request{Curve: "hilbert",
		Options: map[string]string{engine.OptRewriteAll: "true", engine.OptTargetFileSize: "16000"}})
	require.NoError(t, err)

	rep, err := Run(t.Context(), cat, Config{
		Table:        "b.pings",
		Layouts:      []Layout{Current, Unsorted, "hilbert"},
		WindowConfig: WindowConfig{Count: 60, Seed: 1},
		Options:      map[string]string{engine.OptTargetFileSize: "16000"},
	})
	require.NoError(t, err)
	assert.Equal(t, ArrivalHistory, rep.ArrivalOrder)
	current, unsorted, hilbert := rep.Layouts[0], rep.Layouts[1], rep.Layouts[2]
	t.Logf("mean files planned: current %.2f (%d files), unsorted %.2f (%d), hilbert %.2f (%d)",
		current.MeanFilesPlanned, current.Files, unsorted.MeanFilesPlanned, unsorted.Files, hilbert.MeanFilesPlanned, hilbert.Files)
	assert.Equal(t, Current, current.Layout)
	assert.Equal(t, rep.SourceFiles, current.Files, "current measures the table's own files")
	assert.Empty(t, current.ScratchTable)
	assert.InEpsilon(t, hilbert.MeanFilesPlanned, current.MeanFilesPlanned, 0.25, "the compacted table is a Hilbert layout")
	// Arrival order: every copied file spans the map again.
	assert.Greater(t, unsorted.MeanFilesPlanned, 2*current.MeanFilesPlanned)
	assert.Greater(t, unsorted.MeanOverlapDepth, 3*current.MeanOverlapDepth)
}

func TestArrivalFallsBackWithoutHistory(t *testing.T) {
	t.Parallel()
	cat := newCatalog(t)
	generateSmall(t, cat, "b.pings", 2000, 8)
	tbl, err := catalogs.LoadTable(t.Context(), cat, "b.pings")
	require.NoError(t, err)
	current, err := tbl.Scan().PlanFiles(t.Context())
	require.NoError(t, err)

	tasks, src, err := arrivalTasks(t.Context(), tbl, current)
	require.NoError(t, err)
	assert.Equal(t, ArrivalHistory, src)
	assert.Len(t, tasks, 8)

	// Row counts that do not add up (as after rows were removed) make
	// the history unusable: the current files are the fallback.
	tasks, src, err = arrivalTasks(t.Context(), tbl, current[:7])
	require.NoError(t, err)
	assert.Equal(t, ArrivalFiles, src)
	assert.Len(t, tasks, 7)
}
