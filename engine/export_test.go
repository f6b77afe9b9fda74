package engine

import "context"

// SetTestHookBeforeCommit runs f just before each commit attempt and
// returns a function that removes it.
func SetTestHookBeforeCommit(f func(context.Context)) (restore func()) {
	testHookBeforeCommit = f
	return func() { testHookBeforeCommit = nil }
}

// SetTestHookAfterWrite makes every group fail with f's error after its
// files are written, and returns a function that removes it.
func SetTestHookAfterWrite(f func() error) (restore func()) {
	testHookAfterWrite = f
	return func() { testHookAfterWrite = nil }
}

// SetTestHookSpillWrite runs f before every spill segment is written (an
// error fails the write) and returns a function that removes it.
func SetTestHookSpillWrite(f func() error) (restore func()) {
	testHookSpillWrite = f
	return func() { testHookSpillWrite = nil }
}

// SetFreeSpace replaces the free-space probe of spill directories and
// returns a function that restores it.
func SetFreeSpace(f func(string) (int64, error)) (restore func()) {
	old := freeSpace
	freeSpace = f
	return func() { freeSpace = old }
}
