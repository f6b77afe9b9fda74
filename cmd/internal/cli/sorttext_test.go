package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/geocompact/geocompact/engine"
)

// TestSortText checks that a dry run names the spilled sort it plans:
// sorted runs merged by key for a curve, buckets for a linear order.
func TestSortText(t *testing.T) {
	assert.Equal(t, "in memory", sortText(&engine.SortPlan{}, true))
	merged := sortText(&engine.SortPlan{Spill: true, Runs: 9, SpillBytes: 3 << 20}, true)
	assert.Equal(t, "spill: about 9 sorted runs merged, 3.0 MiB", merged)
	assert.NotContains(t, merged, "bucket")
	assert.Equal(t, "spill: 4 buckets, 3.0 MiB", sortText(&engine.SortPlan{Spill: true, Buckets: 4, SpillBytes: 3 << 20}, true))
}
