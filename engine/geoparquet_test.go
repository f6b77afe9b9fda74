package engine_test

import (
	"os"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/schema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/internal/testing/testenv"
	"github.com/geocompact/geocompact/spatial/geoparquettest"
)

// TestRewriteWritesGeoParquet checks that the files a rewrite writes, in
// memory and spilled, on v2 and v3 tables, are valid GeoParquet 1.1 whose
// types and bbox are those of each file's own rows, and that the data
// files' recorded sizes are the files' sizes (the footer grew).
func TestRewriteWritesGeoParquet(t *testing.T) {
	t.Parallel()
	c := testenv.Catalogs(t)[0]
	cases := []struct {
		name string
		gen  bench.GenerateConfig
		req  engine.Request
		crs  bool
	}{
		{"in-memory", bench.GenerateConfig{Rows: 6000, Commits: 6}, engine.Request{Curve: "hilbert", Options: opts("rewrite-all", "true", "target-file-size-bytes", "65536")}, false},
		{"spilled", bench.GenerateConfig{Rows: 9000, Commits: 6, Geometry: bench.Polygons}, engine.Request{Curve: "zorder", Options: opts("rewrite-all", "true", "target-file-size-bytes", "65536", "max-group-memory-bytes", spillBudget)}, false},
		{"binpack-v3-3857", bench.GenerateConfig{Rows: 4000, Commits: 6, FormatVersion: 3, CRS: "EPSG:3857"}, engine.Request{Options: opts("rewrite-all", "true")}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cat, name := newTable(t, c, tc.gen)
			res := rewrite(t, cat, name, tc.req)
			require.Positive(t, res.AddedDataFilesCount)
			files := tableFiles(t, mustLoad(t, cat, name))
			require.Len(t, files, res.AddedDataFilesCount)
			for _, f := range files {
				got := geoparquettest.Check(t, f.File.FilePath())
				assert.Equal(t, "geometry", got.Primary)
				assert.Equal(t, got.Types, got.Declared, "geometry_types are the file's own")
				assert.Equal(t, f.File.Count(), got.Rows)
				assert.Equal(t, fileSize(t, f.File.FilePath()), f.File.FileSizeBytes(), "recorded size is the file's")
				if tc.crs {
					assert.JSONEq(t, `{"name":"EPSG:3857","id":{"authority":"EPSG","code":3857}}`, string(got.CRS))
				} else {
					assert.Nil(t, got.CRS, "OGC:CRS84 is the default and is omitted")
				}
			}
		})
	}
}

// fileSize returns the size of the local file at path (a file:// URL or a
// path).
func fileSize(t testing.TB, path string) int64 {
	t.Helper()
	st, err := os.Stat(strings.TrimPrefix(path, "file://"))
	require.NoError(t, err)
	return st.Size()
}

// TestDataFilesAnnotateIcebergGeometry checks that the Parquet column of
// an Iceberg v3 geometry field carries Parquet's GEOMETRY logical type
// (with the field's CRS), as the Iceberg spec maps it and as PyIceberg and
// DuckDB require, in the files generate and a rewrite write; and that a v2
// table's binary column stays plain binary.
func TestDataFilesAnnotateIcebergGeometry(t *testing.T) {
	t.Parallel()
	c := testenv.Catalogs(t)[0]
	cases := []struct {
		name string
		gen  bench.GenerateConfig
		want schema.LogicalType
	}{
		{"v3", bench.GenerateConfig{Rows: 3000, Commits: 3, FormatVersion: 3}, schema.GeometryLogicalType{}},
		{"v3-3857", bench.GenerateConfig{Rows: 3000, Commits: 3, FormatVersion: 3, CRS: "EPSG:3857"}, schema.GeometryLogicalType{Crs: "EPSG:3857"}},
		{"v2", bench.GenerateConfig{Rows: 3000, Commits: 3}, schema.NoLogicalType{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cat, name := newTable(t, c, tc.gen)
			check := func(stage string) {
				for _, f := range tableFiles(t, mustLoad(t, cat, name)) {
					pf, err := file.OpenParquetFile(strings.TrimPrefix(f.File.FilePath(), "file://"), false)
					require.NoError(t, err)
					sc := pf.MetaData().Schema
					col := sc.ColumnIndexByName("geometry")
					require.GreaterOrEqual(t, col, 0)
					assert.Equal(t, tc.want, sc.Column(col).LogicalType(), "%s: %s", stage, f.File.FilePath())
					require.NoError(t, pf.Close())
				}
			}
			check("generated")
			res := rewrite(t, cat, name, engine.Request{Curve: "hilbert", Options: opts("rewrite-all", "true")})
			require.Positive(t, res.AddedDataFilesCount)
			check("rewritten")
		})
	}
}
