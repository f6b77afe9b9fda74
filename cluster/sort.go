package cluster

import "slices"

// SortKeys sorts keys ascending in place and applies the same permutation
// to rows, ordering equal keys by their rows value. When rows starts as
// 0, 1, 2, … the result is a stable sort: rows[i] is the input position of
// the i-th smallest key, and equal keys keep their input order.
//
// It is an in-place MSD radix sort (American flag sort) on bytes, with
// insertion sort for small buckets. In place means the only memory it
// needs besides keys and rows is a few kilobytes of counters, half what an
// LSD radix sort's scratch copies would take; ordering by (key, row) makes
// it stable although the byte passes are not. keys and rows must have the
// same length.
func SortKeys(keys []uint64, rows []int32) {
	if len(keys) != len(rows) {
		panic("cluster: SortKeys: keys and rows differ in length")
	}
	radixSort(keys, rows, 56)
}

// insertionThreshold is the bucket size below which insertion sort beats
// another radix pass.
const insertionThreshold = 48

func radixSort(keys []uint64, rows []int32, shift int) {
	for {
		n := len(keys)
		if n <= insertionThreshold {
			insertionSort(keys, rows)
			return
		}
		var count [256]int
		for _, k := range keys {
			count[byte(k>>uint(shift))]++
		}
		// Skip a byte every key shares.
		if count[byte(keys[0]>>uint(shift))] == n {
			if shift == 0 {
				slices.Sort(rows) // all keys equal: order by row
				return
			}
			shift -= 8
			continue
		}
		var start, end [256]int
		off := 0
		for b := range 256 {
			start[b] = off
			off += count[b]
			end[b] = off
		}
		next := start
		for b := range 256 {
			for i := next[b]; i < end[b]; {
				k, r := keys[i], rows[i]
				d := byte(k >> uint(shift))
				if int(d) == b {
					i++
					next[b] = i
					continue
				}
				// Follow the cycle until a key for bucket b comes back.
				for int(d) != b {
					j := next[d]
					next[d]++
					keys[j], k = k, keys[j]
					rows[j], r = r, rows[j]
					d = byte(k >> uint(shift))
				}
				keys[i], rows[i] = k, r
				i++
				next[b] = i
			}
		}
		for b := range 256 {
			lo, hi := start[b], end[b]
			if hi-lo < 2 {
				continue
			}
			if shift == 0 {
				slices.Sort(rows[lo:hi])
				continue
			}
			radixSort(keys[lo:hi], rows[lo:hi], shift-8)
		}
		return
	}
}

// insertionSort sorts small slices by (key, row).
func insertionSort(keys []uint64, rows []int32) {
	for i := 1; i < len(keys); i++ {
		k, r := keys[i], rows[i]
		j := i
		for ; j > 0 && (keys[j-1] > k || keys[j-1] == k && rows[j-1] > r); j-- {
			keys[j], rows[j] = keys[j-1], rows[j-1]
		}
		keys[j], rows[j] = k, r
	}
}
