package engine

import "context"

// TestHooks are the points where a test steps into one rewrite.
type TestHooks = testHooks

// WithTestHooks returns ctx carrying h: a rewrite given that context runs
// h's hooks, and no other rewrite does.
func WithTestHooks(ctx context.Context, h TestHooks) context.Context {
	return context.WithValue(ctx, testHooksKey{}, h)
}

// SetMinRowGroupBytes sets the fewest bytes a sorted file's row group
// holds, and returns the function that restores it.
func SetMinRowGroupBytes(n int64) func() {
	was := minRowGroupBytes
	minRowGroupBytes = n
	return func() { minRowGroupBytes = was }
}

// FileParts is fileParts, for its tests.
var FileParts = fileParts
