package maintain_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/maintain"
)

// TestRunReportsProgress checks that a maintain run tells its Progress
// callback each step in order, and during the rewrite the groups and bytes
// done.
func TestRunReportsProgress(t *testing.T) {
	t.Parallel()
	cat := fragmented(t, "p.t", 600, 6)
	p := maintain.DefaultPolicy()
	p.Gate.MinAvgFileBytes = 1 << 30
	var mu sync.Mutex
	var steps []string
	var last maintain.Progress
	rewrites := 0
	_, err := maintain.Run(t.Context(), opened(t, cat, "p.t"), maintain.Config{Policy: p, Progress: func(e maintain.Progress) {
		mu.Lock()
		defer mu.Unlock()
		if e.Rewrite == nil {
			steps = append(steps, e.Step)
			return
		}
		rewrites++
		last = e
	}})
	require.NoError(t, err)
	assert.Equal(t, []string{"measure", "gate", "rewrite", "deletes", "manifests", "expire", "orphans", "measure"}, steps)
	require.Positive(t, rewrites, "the rewrite step reports its own progress")
	assert.Equal(t, "rewrite", last.Step)
	assert.Equal(t, 3, last.Index)
	assert.Equal(t, 8, last.Steps)
	assert.Positive(t, last.Rewrite.Bytes)
	assert.Equal(t, last.Rewrite.Bytes, last.Rewrite.BytesDone, "every group's bytes are done at the end")
	assert.Equal(t, last.Rewrite.Groups, last.Rewrite.GroupsDone)
}
