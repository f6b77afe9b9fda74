package spill_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/geocompact/geocompact/engine/spill"
)

// TestBoundaries checks that boundaries cut sampled keys into ranges of
// about equal counts, that equal keys never straddle a boundary, and
// that BucketOf sends a key to the range holding it.
func TestBoundaries(t *testing.T) {
	keys := []uint64{9, 1, 5, 3, 7, 2, 8, 4, 6, 0}
	bounds := spill.Boundaries(keys, 5)
	assert.Equal(t, []uint64{2, 4, 6, 8}, bounds)
	assert.Equal(t, 0, spill.BucketOf(bounds, 1))
	assert.Equal(t, 1, spill.BucketOf(bounds, 2))
	assert.Equal(t, 4, spill.BucketOf(bounds, 100))

	same := []uint64{5, 5, 5, 5, 5, 5, 1, 9}
	assert.Equal(t, []uint64{5}, spill.Boundaries(same, 4), "repeated keys give one boundary")
	assert.Empty(t, spill.Boundaries(nil, 4))
}

// TestUnits checks that consecutive buckets merge into units up to the
// budget and that a bucket larger than it stands alone.
func TestUnits(t *testing.T) {
	assert.Equal(t, [][2]int{{0, 2}, {2, 3}, {3, 5}}, spill.Units([]int64{4, 5, 20, 1, 9}, 10))
	assert.Empty(t, spill.Units(nil, 10))
}
