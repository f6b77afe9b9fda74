package cluster

import (
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// TestSortKeys compares the radix sort with a stable comparison sort on
// keys drawn to have long common prefixes, many ties and sizes on both
// sides of the insertion-sort threshold.
func TestSortKeys(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 5000).Draw(t, "n")
		prefix := rapid.Uint64().Draw(t, "prefix")
		lowBits := rapid.IntRange(0, 64).Draw(t, "lowBits")
		mask := uint64(1)<<uint(lowBits) - 1
		if lowBits == 64 {
			mask = ^uint64(0)
		}
		seed := rapid.Uint64().Draw(t, "seed")
		keys := make([]uint64, n)
		for i := range keys {
			seed = seed*6364136223846793005 + 1442695040888963407
			keys[i] = prefix&^mask | (seed>>11)&mask
		}
		want := iota32(n)
		slices.SortStableFunc(want, func(a, b int32) int { return cmpU64(keys[a], keys[b]) })
		rows := iota32(n)
		sorted := slices.Clone(keys)
		SortKeys(sorted, rows)
		if !slices.Equal(rows, want) {
			t.Fatalf("rows differ from a stable sort")
		}
		for i, r := range rows {
			if sorted[i] != keys[r] {
				t.Fatalf("key %d is %d, want keys[%d] = %d", i, sorted[i], r, keys[r])
			}
		}
	})
}
