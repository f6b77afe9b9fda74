package engine

import (
	"context"
	"errors"

	"github.com/apache/iceberg-go/catalog"
)

// Rewrite compacts the table called name in cat as cfg says: plan, rewrite
// each group, verify, and commit a replace snapshot.
func Rewrite(ctx context.Context, cat catalog.Catalog, name string, cfg Config) (*Result, error) {
	return nil, errors.New("engine: rewrite is being built")
}
