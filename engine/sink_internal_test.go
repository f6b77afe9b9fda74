package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestRowGroupRows sizes a sorted file's row groups: a sixteenth of the
// file, no fewer than minRowGroupBytes make, no more than Iceberg's
// default limit, and none for bin-packing.
func TestRowGroupRows(t *testing.T) {
	t.Parallel()
	sorted := &rewriter{lay: layout{strategy: Sort}}
	// 128 MiB files of 2,000,000 rows: 125,000 rows, about 8 MiB.
	g := &Group{Records: 20_000_000, Bytes: 1280 << 20, OutputFiles: 10}
	assert.Equal(t, int64(125_000), sorted.rowGroupRows(g))
	// 1 MiB files of 16,000 rows: a sixteenth is 64 KiB; 4 MiB of rows
	// is more than a file, so a file is one row group.
	g = &Group{Records: 160_000, Bytes: 10 << 20, OutputFiles: 10}
	assert.Equal(t, int64(64_000), sorted.rowGroupRows(g))
	// Huge files of tiny rows: capped at Iceberg's default.
	g = &Group{Records: 1 << 32, Bytes: 1 << 34, OutputFiles: 4}
	assert.Equal(t, int64(maxRowGroupRows), sorted.rowGroupRows(g))
	binpack := &rewriter{lay: layout{strategy: BinPack}}
	assert.Zero(t, binpack.rowGroupRows(&Group{Records: 20_000_000, Bytes: 1280 << 20, OutputFiles: 10}))
	assert.Zero(t, sorted.rowGroupRows(&Group{}))
}
