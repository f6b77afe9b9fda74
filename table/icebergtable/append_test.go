package icebergtable_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/ingest"
	"github.com/geocompact/geocompact/internal/testing/icebergtest"
	format "github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/table/icebergtable"
	"github.com/geocompact/geocompact/validate"
	"github.com/geocompact/geocompact/validate/validatetest"
)

// pointsFile writes a valid GeoParquet file of n points with bbox columns.
func pointsFile(t testing.TB, n int) string { return validatetest.PointsFile(t, n) }

// ingestInto ingests files into the Iceberg table name of cat, creating it.
func ingestInto(ctx context.Context, cat catalog.Catalog, name string, files ...string) (*ingest.Result, error) {
	return ingest.Run(ctx, icebergtable.Appender(cat, name), ingest.Config{Files: files, Create: true, Checks: validate.DefaultConfig()})
}

// dataFiles lists the data files under the table's location.
func dataFiles(t testing.TB, tbl *table.Table) []string {
	return icebergtest.DirFiles(t, strings.TrimPrefix(tbl.Location(), "file://")+"/data")
}

// TestIngestGateRefuses: an ingest whose data files do not hold the rows
// it read, or lie outside the table, commits nothing, leaves no data
// file, and does not record its file as ingested (a retry ingests it).
func TestIngestGateRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, kind string
		wrong      func(*format.GateGroup)
	}{
		{"rows", format.GateRows, func(g *format.GateGroup) { g.Files[0].Records-- }},
		{"place", format.GatePlace, func(g *format.GateGroup) { g.Files[0].Path = "file:///elsewhere/x.parquet" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cat, err := catalogs.Open(t.Context(), catalogs.Spec{Warehouse: t.TempDir()})
			require.NoError(t, err)
			_, err = ingestInto(t.Context(), cat, "gis.g", pointsFile(t, 5))
			require.NoError(t, err)
			tbl, err := catalogs.LoadTable(t.Context(), cat, "gis.g")
			require.NoError(t, err)
			before, snap := dataFiles(t, tbl), tbl.CurrentSnapshot().SnapshotID

			src := pointsFile(t, 4)
			icebergtable.SetTamperGate(tc.wrong)
			_, err = ingestInto(t.Context(), cat, "gis.g", src)
			icebergtable.SetTamperGate(nil)
			ge, ok := errors.AsType[*format.GateError](err)
			require.True(t, ok, "err = %v, want a *table.GateError", err)
			assert.Equal(t, tc.kind, ge.Kind)
			tbl, err = catalogs.LoadTable(t.Context(), cat, "gis.g")
			require.NoError(t, err)
			assert.Equal(t, snap, tbl.CurrentSnapshot().SnapshotID, "nothing committed")
			assert.Equal(t, before, dataFiles(t, tbl), "no data file left")

			res, err := ingestInto(t.Context(), cat, "gis.g", src)
			require.NoError(t, err)
			assert.Equal(t, int64(4), res.Rows, "the retry ingests the file")
		})
	}
}
