package maintain_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	"github.com/stretchr/testify/require"
)

// registerInPlace copies one of the table's live data files to a directory
// outside the table location and registers the copy where it lies, as
// Spark's add_files and migrate do, in its own append. It returns the
// outside path.
func registerInPlace(t testing.TB, cat catalog.Catalog, name string) string {
	t.Helper()
	tbl := load(t, cat, name)
	tasks, err := tbl.Scan().PlanFiles(t.Context())
	require.NoError(t, err)
	require.NotEmpty(t, tasks)
	src := trimFileScheme(tasks[0].File.FilePath())
	dst := filepath.Join(t.TempDir(), "registered", "in-place.parquet")
	require.NoError(t, os.MkdirAll(filepath.Dir(dst), 0o755))
	b, err := os.ReadFile(src)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(dst, b, 0o644))
	tx := tbl.NewTransaction()
	require.NoError(t, tx.AddFiles(t.Context(), []string{dst}, nil, false))
	_, err = tx.Commit(t.Context())
	require.NoError(t, err)
	return dst
}
