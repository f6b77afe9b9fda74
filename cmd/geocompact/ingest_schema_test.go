package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/validate/validatetest"
)

// TestIngestPartitionSpecMismatch checks that --partition-by on an
// existing table with another spec fails naming both specs, that Spark's
// spellings are accepted, and that an unknown transform is a usage error
// listing the valid ones before any file is read.
func TestIngestPartitionSpecMismatch(t *testing.T) {
	wh, dir := t.TempDir(), t.TempDir()
	f1 := writeGeoParquet(t, dir, "one", validatetest.File{Rows: validatetest.Points(5), Geo: validatetest.Geo(""), Extra: true})
	f2 := writeGeoParquet(t, dir, "two", validatetest.File{Rows: validatetest.Points(6), Geo: validatetest.Geo(""), Extra: true})
	r := runCLI(t, wh, false, "ingest", "--table", "gis.p", "--create", "--partition-by", "bucket(id, 4)", f1)
	require.Equal(t, exitOK, r.Code, r.Stderr)

	r = runCLI(t, wh, false, "ingest", "--table", "gis.p", "--create", "--partition-by", "bucket(8, id)", f2)
	assert.Equal(t, exitError, r.Code, r.Stderr)
	assert.Contains(t, r.Stderr, "partitioned by bucket(4, id), not by bucket(8, id)")
	assert.Equal(t, int64(5), ingestTableRows(t, ingestLoadTable(t, wh, "gis.p")), "nothing was appended")

	r = runCLI(t, wh, false, "ingest", "--table", "gis.p", "--create", "--partition-by", "bucket(4, id)", f2)
	require.Equal(t, exitOK, r.Code, "the same spec in Spark's order is fine: %s", r.Stderr)
	assert.Equal(t, int64(11), ingestTableRows(t, ingestLoadTable(t, wh, "gis.p")))

	r = runCLI(t, wh, false, "ingest", "--table", "gis.q", "--create", "--partition-by", "weeks(id)", dir+"/missing.parquet")
	assert.Equal(t, exitUsage, r.Code, r.Stderr)
	assert.Contains(t, r.Stderr, `unknown transform "weeks" (want identity, year, years`)
}
