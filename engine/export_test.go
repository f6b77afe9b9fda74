package engine

import "context"

// TestHooks are the points where a test steps into one rewrite.
type TestHooks = testHooks

// WithTestHooks returns ctx carrying h: a rewrite given that context runs
// h's hooks, and no other rewrite does.
func WithTestHooks(ctx context.Context, h TestHooks) context.Context {
	return context.WithValue(ctx, testHooksKey{}, h)
}
