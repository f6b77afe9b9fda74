package ingest_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/ingest"
	"github.com/geocompact/geocompact/spatial/geoparquettest"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/validate"
	"github.com/geocompact/geocompact/validate/validatetest"
)

// flatCoveringFile writes n points whose geo document gives the covering
// as flat column names, the pre-1.1 spelling some writers use.
func flatCoveringFile(t testing.TB, n int) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "flat.parquet")
	validatetest.Write(t, p, validatetest.File{Rows: validatetest.Points(n), Geo: validatetest.GeoFlatCovering, Extra: true})
	return p
}

// TestIngestFlatCovering checks that a file with a flat covering is
// ingested (the covering is a hint) and refused under Strict.
func TestIngestFlatCovering(t *testing.T) {
	cat, err := catalogs.Open(t.Context(), catalogs.Spec{Warehouse: t.TempDir()})
	require.NoError(t, err)
	f := flatCoveringFile(t, 20)

	strict := config("gis.flat", f)
	strict.Checks.Strict = true
	_, err = runIceberg(t.Context(), cat, strict)
	refused, ok := errors.AsType[*ingest.RefusedError](err)
	require.True(t, ok, "err = %v, want a *RefusedError", err)
	assert.EqualValues(t, 1, refused.Files[0].Report.Counts[validate.CodeCoveringFlat])

	res, err := runIceberg(t.Context(), cat, config("gis.flat", f))
	require.NoError(t, err)
	assert.EqualValues(t, 20, res.Rows)
}

// TestIngestWritesGeoParquet checks that the files ingest writes, into v2
// and v3 tables, are valid GeoParquet stating their rows' types and bbox.
func TestIngestWritesGeoParquet(t *testing.T) {
	for _, version := range []int{2, 3} {
		t.Run(map[int]string{2: "v2", 3: "v3"}[version], func(t *testing.T) {
			cat, err := catalogs.Open(t.Context(), catalogs.Spec{Warehouse: t.TempDir()})
			require.NoError(t, err)
			cfg := config("gis.pts", pointsFile(t, 30), pointsFile(t, 12))
			cfg.FormatVersion = version
			_, err = runIceberg(t.Context(), cat, cfg)
			require.NoError(t, err)
			tbl, err := catalogs.LoadTable(t.Context(), cat, "gis.pts")
			require.NoError(t, err)
			files := dataFiles(t, tbl)
			require.NotEmpty(t, files)
			var rows int64
			for _, p := range files {
				got := geoparquettest.Check(t, p)
				assert.Equal(t, []string{"Point"}, got.Declared)
				assert.Equal(t, []float64{-179.5, -89.75, -150.5, -60.75}, got.BBox)
				rows += got.Rows
			}
			assert.EqualValues(t, 42, rows)
		})
	}
}
