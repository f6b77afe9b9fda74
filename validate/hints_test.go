package validate_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/validate"
	"github.com/geocompact/geocompact/validate/validatetest"
)

// geoDoc is a 1.1 document for column "geometry" with extra column members.
func geoDoc(members string) string {
	return `{"version":"1.1.0","primary_column":"geometry","columns":{"geometry":{"encoding":"WKB","geometry_types":["Point"]` + members + `}}}`
}

// hintFile writes points (0..9, 0..9) with bbox columns and the geo
// document geo, and returns its path.
func hintFile(t *testing.T, geo string, rows []validatetest.Row) string {
	t.Helper()
	if rows == nil {
		for i := range 10 {
			x, y := float64(i), float64(i)
			rows = append(rows, validatetest.Row{WKB: validatetest.Point(x, y), BBox: validatetest.Box(x, y, x, y)})
		}
	}
	p := filepath.Join(t.TempDir(), "f.parquet")
	validatetest.Write(t, p, validatetest.File{Rows: rows, Geo: geo})
	return p
}

// TestMalformedHintsAreWarnings checks that malformed optional hints are
// warnings with their own code, the file's rows are still checked, and
// Strict makes the warnings violations.
func TestMalformedHintsAreWarnings(t *testing.T) {
	cases := []struct {
		name, geo, code string
	}{
		{"flat covering", validatetest.GeoFlatCovering, validate.CodeCoveringFlat},
		{"covering of missing columns", geoDoc(`,"covering":{"bbox":{"xmin":["a"],"ymin":["b"],"xmax":["c"],"ymax":["d"]}}`), validate.CodeCovering},
		{"covering of three-part paths", geoDoc(`,"covering":{"bbox":{"xmin":["s","t","u"],"ymin":["s","y"],"xmax":["s","x"],"ymax":["s","y"]}}`), validate.CodeCovering},
		{"bbox slightly off", geoDoc(`,"bbox":[0,0,8.999,9]`), validate.CodeGeoBBox},
		{"bbox of three numbers", geoDoc(`,"bbox":[0,0,9]`), validate.CodeGeoBBox},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := hintFile(t, tc.geo, nil)
			rep, err := validate.File(t.Context(), p, validate.DefaultConfig())
			require.NoError(t, err)
			assert.True(t, rep.OK(), "counts %v", rep.Counts)
			assert.Equal(t, map[string]int64{tc.code: 1}, rep.Counts, "one warning of its own code, no other finding")
			assert.True(t, validate.IsWarning(tc.code))
			assert.EqualValues(t, 10, rep.Rows)
			require.NotEmpty(t, rep.Examples)
			assert.Contains(t, rep.Examples[0].Detail, ":", "the detail states the rule and the fix")

			strict := validate.DefaultConfig()
			strict.Strict = true
			rep, err = validate.File(t.Context(), p, strict)
			require.NoError(t, err)
			assert.False(t, rep.OK())
			assert.EqualValues(t, 1, rep.Violations())
		})
	}
}

// TestFlatCoveringNamesTheBBoxColumns checks that flat covering paths are
// read as the bbox columns they name: a row whose named bbox disagrees
// with its geometry is a violation.
func TestFlatCoveringNamesTheBBoxColumns(t *testing.T) {
	rows := []validatetest.Row{
		{WKB: validatetest.Point(1, 1), BBox: validatetest.Box(1, 1, 1, 1)},
		{WKB: validatetest.Point(2, 2), BBox: validatetest.Box(5, 5, 5, 5)},
	}
	rep, err := validate.File(t.Context(), hintFile(t, validatetest.GeoFlatCovering, rows), validate.DefaultConfig())
	require.NoError(t, err)
	assert.EqualValues(t, 1, rep.Counts[validate.CodeBBoxMismatch])
	assert.EqualValues(t, 1, rep.Counts[validate.CodeCoveringFlat])
}

// TestBadGeoMetadataIsOneFinding checks that an unusable geo document is
// reported once, as geo.metadata, without a misleading "no geometry
// column" finding, and that its primary column's rows are still checked.
func TestBadGeoMetadataIsOneFinding(t *testing.T) {
	geo := `{"version":"2.5.0","primary_column":"geometry","columns":{"geometry":{"encoding":"WKB"}}}`
	rows := []validatetest.Row{{WKB: []byte{1, 1, 0}, BBox: validatetest.Box(0, 0, 0, 0)}}
	rep, err := validate.File(t.Context(), hintFile(t, geo, rows), validate.DefaultConfig())
	require.NoError(t, err)
	assert.Zero(t, rep.Counts[validate.CodeColumn], "no misleading geometry.column finding: %+v", rep.Examples)
	assert.EqualValues(t, 1, rep.Counts[validate.CodeGeoMetadata])
	assert.EqualValues(t, 1, rep.Counts[validate.CodeTruncated], "the rows are still checked")
	assert.Contains(t, rep.Examples[0].Detail, "GeoParquet 1.x")
}

// TestFileReportsGeometry checks the summary a file's validation returns.
func TestFileReportsGeometry(t *testing.T) {
	rep, err := validate.File(t.Context(), hintFile(t, geoDoc(`,"crs":{"id":{"authority":"EPSG","code":3857}}`), nil), validate.DefaultConfig())
	require.NoError(t, err)
	require.NotNil(t, rep.Geometry)
	assert.Equal(t, validate.GeometryInfo{Column: "geometry", Encoding: "wkb", CRS: "EPSG:3857", Types: []string{"Point"}, BBox: []float64{0, 0, 9, 9}}, *rep.Geometry)
}
