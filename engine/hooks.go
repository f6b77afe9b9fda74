package engine

import (
	"context"

	"github.com/geocompact/geocompact/engine/spill"
	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/table"
)

// testHooks are the points where a test steps into one rewrite: before
// each commit attempt; after a group's files are written (an error fails
// the group); before each spill segment is written (an error fails the
// write as a full disk would); in place of the free-space probe of the
// spill directory; on the extent a spilled group's file statistics
// give, when its sort's scale is taken from them (the extent returned is
// the one assumed instead); in place of the cores a group's files are
// written with (Lanes, when positive); and on how many parts a sorted
// group's files are written in at once (and a bin-packed group's,
// read and written in parts). They travel in the rewrite's
// context, so only that rewrite sees them and tests that set them run in
// parallel with others; only the package's tests set them
// (export_test.go).
type testHooks struct {
	BeforeCommit func(context.Context)
	// Replacements sees, and may change, what a commit is handed: a
	// test's way to show the table's commit gate refusing it.
	Replacements func([]table.Replacement)
	AfterWrite   func() error
	SpillWrite   func() error
	FreeSpace    func(dir string) (int64, error)
	FileExtent   func(spatial.Bound) spatial.Bound
	Lanes        int
	WriteParts   func(parts int)
}

type testHooksKey struct{}

// hooksOf returns the test hooks ctx carries (none outside tests).
func hooksOf(ctx context.Context) testHooks {
	h, _ := ctx.Value(testHooksKey{}).(testHooks)
	return h
}

// freeSpace probes the free space of the spill directory dir.
func (h testHooks) freeSpace(dir string) (int64, error) {
	if h.FreeSpace != nil {
		return h.FreeSpace(dir)
	}
	return spill.FreeBytes(dir)
}
