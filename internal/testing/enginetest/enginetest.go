// Package enginetest opens a table and rewrites it, for tests that rewrite
// tables by name or location.
package enginetest

import (
	"context"

	"github.com/apache/iceberg-go/catalog"

	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/deltatable"
	"github.com/geocompact/geocompact/table/icebergtable"
)

// Rewrite opens the Iceberg table called name in cat and rewrites it.
func Rewrite(ctx context.Context, cat catalog.Catalog, name string, req engine.Request) (*engine.Result, error) {
	t, err := icebergtable.Open(ctx, cat, name)
	if err != nil {
		return nil, err
	}
	return engine.Rewrite(ctx, t, req)
}

// RewriteDelta opens the Delta table at location and rewrites it.
func RewriteDelta(ctx context.Context, location string, req engine.Request) (*engine.Result, error) {
	t, err := deltatable.OpenLocation(ctx, location, table.WriteUnless(req.DryRun))
	if err != nil {
		return nil, err
	}
	return engine.Rewrite(ctx, t, req)
}
