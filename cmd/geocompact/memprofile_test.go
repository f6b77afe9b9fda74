package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHeapProfile checks that GEOCOMPACT_MEMPROFILE's file holds a heap
// profile (gzip-compressed protocol buffers) once stopped, also when the
// heap grew while it watched, and that an empty path watches nothing.
func TestHeapProfile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "heap.prof")
	stop := heapProfile(path)
	held := make([][]byte, 0, 64)
	for range 64 {
		held = append(held, make([]byte, 1<<20))
	}
	time.Sleep(3 * heapSample) // lets the sampler see the larger heap; no timing is asserted
	stop()
	assert.Len(t, held, 64)
	requireProfile(t, path)

	heapProfile("")()
	quick := filepath.Join(t.TempDir(), "quick.prof")
	heapProfile(quick)() // stopped before any sample: the profile is taken at stop
	fi, err := os.Stat(quick)
	require.NoError(t, err)
	assert.Positive(t, fi.Size())
}
