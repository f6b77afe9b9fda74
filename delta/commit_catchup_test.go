package delta

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCommitRewriteCatchesUpWithAppends commits a rewrite after more
// concurrent appends than it has attempts: losing one race is one
// attempt, after which every commit since is checked and the next try is
// after the latest, so the rewrite lands with every append kept.
func TestCommitRewriteCatchesUpWithAppends(t *testing.T) {
	tbl := newTestTable(t, "none", nil)
	s := snap(t, tbl)
	appendFiles(t, tbl, writeFile(t, tbl, s, 1, 0, 10), writeFile(t, tbl, s, 1, 10, 20))
	s, acts := optimizePlan(t, tbl)
	for i := int64(0); i < 5; i++ {
		appendFiles(t, tbl, writeFile(t, tbl, s, 1, 100+10*i, 110+10*i))
	}
	v, err := CommitRewrite(t.Context(), tbl, s.Version, acts, 2)
	require.NoError(t, err)
	assert.Equal(t, s.Version+6, v)
	assert.Len(t, snap(t, tbl).Files, 6, "the optimized file and the five appended ones")
	assert.Equal(t, sorted(idRange(1, 0, 20), idRange(1, 100, 150)), ids(t, tbl))
}
