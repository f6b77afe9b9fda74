package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestMergeSizes checks the spilled merge's sizes: a merge's batches keep
// within a quarter of the budget, and the batches shrink so that one
// merge reads every run when a quarter of the budget allows it.
func TestMergeSizes(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name        string
		budget      int64
		runs        int
		batch       int64
		fanIn       int
		oneMergeAll bool
	}{
		// A 10 GB group at 512 MiB: about 480 runs of 64 MiB, one merge.
		{"10 GB at 512 MiB", 512 * mib, 480, 256 << 10, 512, true},
		// The same group at the 128 MiB default: about 1,900 runs of 16
		// MiB, in batches of about 17 KiB, one merge.
		{"10 GB at 128 MiB", 128 * mib, 1900, 32 * mib / 1900, 1900, true},
		// Past the largest fan-in: the smallest batches read 2,048 at once.
		{"20 GB at 128 MiB", 128 * mib, 3800, 16 << 10, 2048, false},
		// A 2 GiB group at 64 MiB: about 256 runs of 8 MiB.
		{"2 GiB at 64 MiB", 64 * mib, 256, 64 << 10, 256, true},
		// Few runs: the largest batches.
		{"small", 128 * mib, 15, 256 << 10, 128, true},
		// The smallest budgets keep the least fan-in.
		{"1 MiB", mib, 40, 16 << 10, minFanIn, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			batch, fan := mergeSizes(tc.budget, tc.runs)
			assert.Equal(t, tc.batch, batch)
			assert.Equal(t, tc.fanIn, fan)
			assert.Equal(t, tc.oneMergeAll, fan >= tc.runs)
			if fan > minFanIn {
				assert.LessOrEqual(t, int64(fan)*batch, tc.budget/4, "the merge's batches within a quarter of the budget")
			}
		})
	}
}
