package job_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/cluster"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/internal/testing/icebergtest"
)

// TestKDJobMatchesRewrite checks that a kd group shuffled across workers
// (in buckets of sampled key ranges, its files cut from the cell counts
// the scatter returns) writes exactly the files the local engine writes,
// spilled and in memory: the same rows in the same files in the same
// order, which tile the plane as the leaves do.
func TestKDJobMatchesRewrite(t *testing.T) {
	t.Parallel()
	gen := bench.GenerateConfig{Rows: 30011, Commits: 10, Distribution: bench.Clustered}
	base := []string{"rewrite-all", "true", "target-file-size-bytes", "65536"}
	spilled := engine.Request{Curve: "kd", Options: icebergtest.Opts(append(base, "max-group-memory-bytes", icebergtest.SpillBudget)...)}
	local, dist, name := icebergtest.TwinTables(t, gen, nil)
	inMemory, _ := icebergtest.NewTable(t, icebergtest.SQLite(t), gen)
	before := icebergtest.Digest(t, icebergtest.Load(t, dist, name))
	want := icebergtest.Rewrite(t, local, name, spilled)
	require.True(t, want.Plan.Groups[0].Sort.Spill)
	icebergtest.Rewrite(t, inMemory, name, engine.Request{Curve: "kd", Options: icebergtest.Opts(base...)})

	j, got, err := runJob(t, dist, name, spilled, false)
	require.NoError(t, err)
	require.Len(t, j.Groups, 1)
	g := j.Groups[0]
	assert.False(t, g.Whole)
	assert.Greater(t, g.Buckets, 2, "the group is shuffled across buckets")
	assert.Equal(t, uint(64-cluster.KDLeafBits), g.CutShift)
	assert.True(t, got.Verified)
	assert.Equal(t, want.AddedDataFilesCount, got.AddedDataFilesCount)
	tbl := icebergtest.Load(t, dist, name)
	icebergtest.CheckUnchanged(t, before, tbl)
	rows := icebergtest.FileRows(t, tbl)
	assert.Equal(t, icebergtest.FileRows(t, icebergtest.Load(t, local, name)), rows, "as the local spilled sort")
	assert.Equal(t, icebergtest.FileRows(t, icebergtest.Load(t, inMemory, name)), rows, "as the local in-memory sort")
	boxes := icebergtest.FileBoxes(t, tbl)
	require.Greater(t, len(boxes), 8)
	icebergtest.AssertTiled(t, boxes)

	// Without the cell counts a bucket cannot know where its files end.
	_, err = j.WriteBucket(t.Context(), 0, 0, 0, before.Rows, nil, nil)
	require.ErrorContains(t, err, "cell counts of the group hold 0 rows")
}
