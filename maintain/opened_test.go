package maintain_test

import (
	"testing"

	"github.com/apache/iceberg-go/catalog"
	"github.com/stretchr/testify/require"

	format "github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/icebergtable"
)

// opened opens the table called name in cat at its latest version, as
// Run takes it.
func opened(t *testing.T, cat catalog.Catalog, name string) format.Table {
	t.Helper()
	tbl, err := icebergtable.Open(t.Context(), cat, name)
	require.NoError(t, err)
	return tbl
}
