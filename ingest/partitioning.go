package ingest

import (
	"strings"

	format "github.com/geocompact/geocompact/table"
)

// ValidatePartitionSpec checks the syntax and transforms of a partition
// spec without a schema (see table.ParsePartitioning). Errors match
// ErrPartitionSpec.
func ValidatePartitionSpec(expr string) error {
	if strings.TrimSpace(expr) == "" {
		return nil
	}
	_, err := format.ParsePartitioning(expr)
	return err
}
