package engine_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/internal/testing/icebergtest"
)

// TestKDCutsFilesAtLeaves checks that a kd rewrite cuts its files where
// the tree's leaves end, in memory and spilled: the files of points then
// tile the plane without overlapping, which files cut at even counts
// across leaves would not, and every file stays in the size band (0.75 to
// 1.8 of an even share of the rows, as min- and max-file-size are of the
// target).
func TestKDCutsFilesAtLeaves(t *testing.T) {
	t.Parallel()
	c := sqlite(t)
	// A row count that the files do not divide: cut at even counts, each
	// file would end a few rows further from its leaf's end.
	cfg := bench.GenerateConfig{Rows: 30011, Commits: 10, Distribution: bench.Clustered}
	for _, budget := range []string{"", spillBudget} {
		t.Run("budget="+budget, func(t *testing.T) {
			cat, name := newTable(t, c, cfg)
			before := tableDigest(t, mustLoad(t, cat, name))
			o := []string{"rewrite-all", "true", "target-file-size-bytes", "65536"}
			if budget != "" {
				o = append(o, "max-group-memory-bytes", budget)
			}
			res := rewrite(t, cat, name, engine.Request{Curve: "kd", Options: opts(o...)})
			require.Len(t, res.Plan.Groups, 1)
			assert.Equal(t, budget != "", res.Plan.Groups[0].Sort.Spill)
			tbl := mustLoad(t, cat, name)
			checkUnchanged(t, before, tbl)
			boxes := icebergtest.FileBoxes(t, tbl)
			assert.InDelta(t, res.Plan.Groups[0].OutputFiles, len(boxes), 1, "one file per leaf")
			require.Greater(t, len(boxes), 8)
			share := float64(cfg.Rows) / float64(res.Plan.Groups[0].OutputFiles)
			for _, f := range tableFiles(t, tbl) {
				n := float64(f.File.Count())
				assert.True(t, n >= 0.75*share && n <= 1.8*share, "%d rows against an even share of %.0f: outside the size band", f.File.Count(), share)
			}
			icebergtest.AssertTiled(t, boxes)
		})
	}
}
