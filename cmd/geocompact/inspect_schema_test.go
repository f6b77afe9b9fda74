package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/inspect"
)

// TestInspectSchema checks the schema view, human and --json, of a
// partitioned v2 table and a v3 table in EPSG:3857.
func TestInspectSchema(t *testing.T) {
	wh := t.TempDir()
	generateForTest(t, wh, "--table", "demo.p", "--rows", "200", "--commits", "2", "--partition-by", "day(ts)")
	generateForTest(t, wh, "--table", "demo.v3", "--rows", "200", "--commits", "2", "--format-version", "3", "--crs", "EPSG:3857")

	r := runCLI(t, wh, false, "inspect", "schema", "--table", "demo.p")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	for _, want := range []string{"geometry column:  geometry", "encoding:         wkb", "crs:              OGC:CRS84 (from table property)",
		"bbox columns:     bbox_minx, bbox_miny, bbox_maxx, bbox_maxy", "partition spec:   day(ts)", "sort order:       unsorted",
		"4   geometry   binary", "geocompact.geometry.column"} {
		assert.Contains(t, r.Stdout, want)
	}

	r = runCLI(t, wh, false, "--json", "inspect", "describe", "--table", "demo.v3")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	var got inspect.TableSchema
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &got))
	assert.Equal(t, 3, got.FormatVersion)
	require.NotNil(t, got.Geometry)
	assert.Equal(t, inspect.Geometry{Column: "geometry", Encoding: "iceberg-geometry", CRS: "EPSG:3857", CRSSource: "iceberg type", BBoxColumns: []string{}}, *got.Geometry)
	assert.Equal(t, "unpartitioned", got.PartitionSpec)
	assert.NotEmpty(t, got.Columns)

	r = runCLI(t, wh, false, "inspect", "schema")
	assert.Equal(t, exitUsage, r.Code)
}
