package engine_test

import (
	"testing"

	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/cluster"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/engine/verify"
	"github.com/geocompact/geocompact/spatial"
)

// fileBoxes reads each data file of tbl on its own and returns the box of
// its rows.
func fileBoxes(t *testing.T, tbl *table.Table) []spatial.Bound {
	t.Helper()
	var out []spatial.Bound
	for _, task := range tableFiles(t, tbl) {
		_, recs, err := tbl.Scan().ReadTasks(t.Context(), []table.FileScanTask{task})
		require.NoError(t, err)
		box := spatial.EmptyBound()
		for rec, err := range recs {
			require.NoError(t, err)
			geom, bbox := verify.Columns(rec.Schema(), "geometry")
			box = box.Extend(verify.Extent(rec, geom, bbox))
			rec.Release()
		}
		out = append(out, box)
	}
	return out
}

// TestKDCutsFilesAtLeaves checks that a kd rewrite cuts its files where
// the tree's leaves end, in memory and spilled: the files of points then
// tile the plane without overlapping, which files cut at even counts
// across leaves would not, and every file stays in the size band (0.75 to
// 1.8 of an even share of the rows, as min- and max-file-size are of the
// target).
func TestKDCutsFilesAtLeaves(t *testing.T) {
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
			boxes := fileBoxes(t, tbl)
			assert.InDelta(t, res.Plan.Groups[0].OutputFiles, len(boxes), 1, "one file per leaf")
			require.Greater(t, len(boxes), 8)
			share := float64(cfg.Rows) / float64(res.Plan.Groups[0].OutputFiles)
			for _, f := range tableFiles(t, tbl) {
				n := float64(f.File.Count())
				assert.True(t, n >= 0.75*share && n <= 1.8*share, "%d rows against an even share of %.0f: outside the size band", f.File.Count(), share)
			}
			assertTiled(t, boxes)
		})
	}
}

// assertTiled checks that no two boxes overlap (touching is fine).
func assertTiled(t *testing.T, boxes []spatial.Bound) {
	t.Helper()
	for i := range boxes {
		for j := range i {
			a, b := boxes[i], boxes[j]
			overlap := max(a.MinX, b.MinX) < min(a.MaxX, b.MaxX) && max(a.MinY, b.MinY) < min(a.MaxY, b.MaxY)
			assert.False(t, overlap, "files %d %v and %d %v overlap", i, a, j, b)
		}
	}
}

// TestKDJobMatchesRewrite checks that a kd group shuffled across workers
// (in buckets of sampled key ranges, its files cut from the cell counts
// the scatter returns) writes exactly the files the local engine writes,
// spilled and in memory: the same rows in the same files in the same
// order, which tile the plane as the leaves do.
func TestKDJobMatchesRewrite(t *testing.T) {
	gen := bench.GenerateConfig{Rows: 30011, Commits: 10, Distribution: bench.Clustered}
	base := []string{"rewrite-all", "true", "target-file-size-bytes", "65536"}
	spilled := engine.Request{Curve: "kd", Options: opts(append(base, "max-group-memory-bytes", spillBudget)...)}
	local, dist, name := twinTables(t, gen, nil)
	inMemory, _ := newTable(t, sqlite(t), gen)
	before := tableDigest(t, mustLoad(t, dist, name))
	want := rewrite(t, local, name, spilled)
	require.True(t, want.Plan.Groups[0].Sort.Spill)
	rewrite(t, inMemory, name, engine.Request{Curve: "kd", Options: opts(base...)})

	j, got, err := runJob(t, dist, name, spilled, false)
	require.NoError(t, err)
	require.Len(t, j.Groups, 1)
	g := j.Groups[0]
	assert.False(t, g.Whole)
	assert.Greater(t, g.Buckets, 2, "the group is shuffled across buckets")
	assert.Equal(t, uint(64-cluster.KDLeafBits), g.CutShift)
	assert.True(t, got.Verified)
	assert.Equal(t, want.AddedDataFilesCount, got.AddedDataFilesCount)
	tbl := mustLoad(t, dist, name)
	checkUnchanged(t, before, tbl)
	rows := fileRows(t, tbl)
	assert.Equal(t, fileRows(t, mustLoad(t, local, name)), rows, "as the local spilled sort")
	assert.Equal(t, fileRows(t, mustLoad(t, inMemory, name)), rows, "as the local in-memory sort")
	boxes := fileBoxes(t, tbl)
	require.Greater(t, len(boxes), 8)
	assertTiled(t, boxes)

	// Without the cell counts a bucket cannot know where its files end.
	_, err = j.WriteBucket(t.Context(), 0, 0, 0, before.Rows, nil, nil)
	require.ErrorContains(t, err, "cell counts of the group hold 0 rows")
}
