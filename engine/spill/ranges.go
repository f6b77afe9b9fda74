package spill

import (
	"slices"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/geocompact/geocompact/cluster"
)

// Boundaries returns up to k-1 ascending, distinct keys that cut the
// sampled keys into k ranges of about equal counts (it sorts keys). A row
// goes to bucket BucketOf(bounds, key): equal keys always share a bucket.
func Boundaries(keys []uint64, k int) []uint64 {
	slices.Sort(keys)
	var out []uint64
	for i := 1; i < k && len(keys) > 0; i++ {
		b := keys[i*len(keys)/k]
		if len(out) == 0 || b > out[len(out)-1] {
			out = append(out, b)
		}
	}
	return out
}

// BucketOf is the number of boundaries at or below key.
func BucketOf(bounds []uint64, key uint64) int {
	return sort.Search(len(bounds), func(i int) bool { return bounds[i] > key })
}

// GroupByBucket returns rec's rows (of schema sc, keyed keys, one per
// row) reordered by bucket, stably, cut by bounds, and sets counts[b] to
// the first row of bucket b (counts[len(bounds)+1] = rows; counts has
// room for that many entries).
func GroupByBucket(rec arrow.RecordBatch, sc *arrow.Schema, keys []uint64, bounds []uint64, counts []int32) (arrow.RecordBatch, error) {
	clear(counts)
	ids := make([]int32, len(keys))
	for i, key := range keys {
		b := int32(BucketOf(bounds, key))
		ids[i] = b
		counts[b+1]++
	}
	for b := 1; b < len(counts); b++ {
		counts[b] += counts[b-1]
	}
	next := slices.Clone(counts)
	order := make([]int32, len(keys))
	for i, b := range ids {
		order[next[b]] = int32(i)
		next[b]++
	}
	return cluster.Gather(sc, []arrow.RecordBatch{rec}, order, nil)
}

// Units merges consecutive buckets of the given sizes into sort units of
// at most unit bytes (a bucket larger than unit is a unit of its own), as
// [first, end) pairs.
func Units(bytes []int64, unit int64) [][2]int {
	var out [][2]int
	var have int64
	for b, n := range bytes {
		if len(out) == 0 || have+n > unit {
			out = append(out, [2]int{b, b + 1})
			have = n
			continue
		}
		out[len(out)-1][1] = b + 1
		have += n
	}
	return out
}
