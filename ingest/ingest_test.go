package ingest_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/ingest"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/table/icebergtable"
	"github.com/geocompact/geocompact/validate"
	"github.com/geocompact/geocompact/validate/validatetest"
)

// pointsFile writes a valid GeoParquet file of n points with bbox columns.
func pointsFile(t testing.TB, n int) string { return validatetest.PointsFile(t, n) }

// icebergCase is an ingest into the Iceberg table name.
type icebergCase struct {
	name string
	ingest.Config
}

func config(name string, files ...string) icebergCase {
	return icebergCase{name, ingest.Config{Files: files, Create: true, Checks: validate.DefaultConfig()}}
}

func runIceberg(ctx context.Context, cat catalog.Catalog, c icebergCase) (*ingest.Result, error) {
	return ingest.Run(ctx, icebergtable.Appender(cat, c.name), c.Config)
}

// dataFiles lists the data files under the table's location.
func dataFiles(t testing.TB, tbl *table.Table) []string {
	t.Helper()
	var out []string
	root := strings.TrimPrefix(tbl.Location(), "file://")
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.Contains(p, "/data/") {
			out = append(out, p)
		}
		return err
	}))
	slices.Sort(out)
	return out
}

func TestRunCreatesAndAppends(t *testing.T) {
	cat, err := catalogs.Open(t.Context(), catalogs.Spec{Warehouse: t.TempDir()})
	require.NoError(t, err)
	res, err := runIceberg(t.Context(), cat, config("gis.pts", pointsFile(t, 5)))
	require.NoError(t, err)
	assert.Equal(t, ingest.Result{Table: "gis.pts", Created: true, Commit: res.Commit, Committed: true, Files: 1, DataFiles: 1, Rows: 5}, *res)

	res, err = runIceberg(t.Context(), cat, config("gis.pts", pointsFile(t, 3), pointsFile(t, 4)))
	require.NoError(t, err)
	assert.False(t, res.Created)
	assert.Equal(t, int64(7), res.Rows)
	tbl, err := catalogs.LoadTable(t.Context(), cat, "gis.pts")
	require.NoError(t, err)
	assert.Equal(t, res.Commit, tbl.CurrentSnapshot().SnapshotID)
	assert.Len(t, dataFiles(t, tbl), 2, "one data file per commit")
}

func TestRunRefusesInvalidFiles(t *testing.T) {
	cat, err := catalogs.Open(t.Context(), catalogs.Spec{Warehouse: t.TempDir()})
	require.NoError(t, err)
	bad := filepath.Join(t.TempDir(), "bad.parquet")
	validatetest.Write(t, bad, validatetest.File{Rows: []validatetest.Row{{WKB: []byte{1, 2, 3}}}, Geo: validatetest.Geo(""), Extra: true})
	_, err = runIceberg(t.Context(), cat, config("gis.bad", pointsFile(t, 2), bad))
	refused, ok := errors.AsType[*ingest.RefusedError](err)
	require.True(t, ok, "err = %v, want a *RefusedError", err)
	require.Len(t, refused.Files, 2)
	assert.True(t, refused.Files[0].Report.OK())
	assert.False(t, refused.Files[1].Report.OK())
	exists, err := cat.CheckTableExists(t.Context(), table.Identifier{"gis", "bad"})
	require.NoError(t, err)
	assert.False(t, exists, "a refused first ingest creates no table")
}

func TestConfigValidate(t *testing.T) {
	for name, c := range map[string]icebergCase{
		"bad table":       {"t", ingest.Config{Files: []string{"a"}}},
		"no files":        {"a.t", ingest.Config{}},
		"format version":  {"a.t", ingest.Config{Files: []string{"a"}, Create: true, FormatVersion: 4}},
		"spec w/o create": {"a.t", ingest.Config{Files: []string{"a"}, PartitionBy: "id"}},
		"drop and add":    {"a.t", ingest.Config{Files: []string{"a"}, DropExtraColumns: true, AddColumns: true}},
	} {
		c.Checks = validate.DefaultConfig()
		_, err := runIceberg(t.Context(), nil, c)
		assert.ErrorIs(t, err, ingest.ErrConfig, name)
	}
}

type losingCatalog struct{ catalog.Catalog }

func (c *losingCatalog) LoadTable(ctx context.Context, ident table.Identifier) (*table.Table, error) {
	t, err := c.Catalog.LoadTable(ctx, ident)
	if err != nil {
		return nil, err
	}
	return table.New(t.Identifier(), t.Metadata(), t.MetadataLocation(), t.FS, c), nil
}

func (c *losingCatalog) CommitTable(context.Context, table.Identifier, []table.Requirement, []table.Update) (table.Metadata, string, error) {
	return nil, "", fmt.Errorf("%w: lost the race", table.ErrCommitFailed)
}

// TestLostCommitLeavesNoFiles checks that when every commit attempt loses,
// the data files written for it are deleted again. (Manifests the failed
// attempts wrote stay under metadata/ for orphan cleanup: a concurrent
// writer's in-flight manifests look the same, so they are not ours to
// guess at.)
func TestLostCommitLeavesNoFiles(t *testing.T) {
	cat, err := catalogs.Open(t.Context(), catalogs.Spec{Warehouse: t.TempDir()})
	require.NoError(t, err)
	_, err = runIceberg(t.Context(), cat, config("gis.l", pointsFile(t, 5)))
	require.NoError(t, err)
	tbl, err := catalogs.LoadTable(t.Context(), cat, "gis.l")
	require.NoError(t, err)
	before, snap := dataFiles(t, tbl), tbl.CurrentSnapshot().SnapshotID
	require.Len(t, before, 1)

	cfg := config("gis.l", pointsFile(t, 6))
	cfg.CommitRetries = -1
	_, err = runIceberg(t.Context(), &losingCatalog{cat}, cfg)
	require.True(t, catalogs.IsRetryable(err), "err = %v, want a retryable conflict", err)
	tbl, err = catalogs.LoadTable(t.Context(), cat, "gis.l")
	require.NoError(t, err)
	assert.Equal(t, snap, tbl.CurrentSnapshot().SnapshotID, "snapshot moved")
	assert.Equal(t, before, dataFiles(t, tbl), "data files left behind")
}

// lateCatalog answers that the table does not exist on its first load, as
// a catalog does to an ingest that looks just before another one creates
// the table.
type lateCatalog struct {
	catalog.Catalog
	missed bool
}

func (c *lateCatalog) LoadTable(ctx context.Context, ident table.Identifier) (*table.Table, error) {
	if !c.missed {
		c.missed = true
		return nil, fmt.Errorf("%w: %v", catalog.ErrNoSuchTable, ident)
	}
	return c.Catalog.LoadTable(ctx, ident)
}

// TestRunCreateRaceAppends: an ingest --create that loses the create to
// another ingest appends to the table the other one made, and a failure
// after that never drops the table, which holds the other's rows.
func TestRunCreateRaceAppends(t *testing.T) {
	cat, err := catalogs.Open(t.Context(), catalogs.Spec{Warehouse: t.TempDir()})
	require.NoError(t, err)
	_, err = runIceberg(t.Context(), cat, config("gis.race", pointsFile(t, 5)))
	require.NoError(t, err)

	res, err := runIceberg(t.Context(), &lateCatalog{Catalog: cat}, config("gis.race", pointsFile(t, 3)))
	require.NoError(t, err)
	assert.False(t, res.Created)
	assert.Equal(t, int64(3), res.Rows)
	tbl, err := catalogs.LoadTable(t.Context(), cat, "gis.race")
	require.NoError(t, err)
	assert.Equal(t, res.Commit, tbl.CurrentSnapshot().SnapshotID)
	assert.Equal(t, "8", tbl.CurrentSnapshot().Summary.Properties["total-records"])
}
