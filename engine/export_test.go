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
