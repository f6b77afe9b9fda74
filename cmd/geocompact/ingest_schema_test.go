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
	t.Parallel()
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

// TestIngestExtraColumns checks that a file with a column the table lacks
// is refused naming it and the ways through, that --drop-extra-columns
// appends without it, and that --add-columns evolves the schema so old
// rows read null.
func TestIngestExtraColumns(t *testing.T) {
	t.Parallel()
	wh, dir := t.TempDir(), t.TempDir()
	base := writeGeoParquet(t, dir, "base", validatetest.File{Rows: validatetest.Points(4), Geo: validatetest.Geo("")})
	withID := writeGeoParquet(t, dir, "with-id", validatetest.File{Rows: validatetest.Points(3), Geo: validatetest.Geo(""), Extra: true})
	require.Equal(t, exitOK, runCLI(t, wh, false, "ingest", "--table", "gis.e", "--create", base).Code)

	r := runCLI(t, wh, false, "ingest", "--table", "gis.e", withID)
	assert.Equal(t, exitError, r.Code, r.Stderr)
	assert.Contains(t, r.Stderr, `with-id.parquet has columns the table lacks: "id"`)
	assert.Contains(t, r.Stderr, "--drop-extra-columns")
	assert.Contains(t, r.Stderr, "--add-columns")
	assert.Contains(t, r.Stderr, "nothing was written")
	assert.Equal(t, int64(4), ingestTableRows(t, ingestLoadTable(t, wh, "gis.e")))

	r = runCLI(t, wh, false, "ingest", "--table", "gis.e", "--drop-extra-columns", "--add-columns", withID)
	assert.Equal(t, exitUsage, r.Code, r.Stderr)

	r = runCLI(t, wh, false, "ingest", "--table", "gis.e", "--drop-extra-columns", withID)
	require.Equal(t, exitOK, r.Code, r.Stderr)
	tbl := ingestLoadTable(t, wh, "gis.e")
	assert.Equal(t, int64(7), ingestTableRows(t, tbl))
	_, has := tbl.Schema().FindFieldByName("id")
	assert.False(t, has, "--drop-extra-columns leaves the schema alone")

	again := writeGeoParquet(t, dir, "with-id-2", validatetest.File{Rows: validatetest.Points(5), Geo: validatetest.Geo(""), Extra: true})
	r = runCLI(t, wh, false, "ingest", "--table", "gis.e", "--add-columns", again)
	require.Equal(t, exitOK, r.Code, r.Stderr)
	assert.Contains(t, r.Stderr, "added columns to gis.e: id")
	tbl = ingestLoadTable(t, wh, "gis.e")
	f, has := tbl.Schema().FindFieldByName("id")
	require.True(t, has, "--add-columns adds the column")
	assert.False(t, f.Required, "an added column is optional")
	assert.Equal(t, int64(12), ingestTableRows(t, tbl))
	r = runCLI(t, wh, false, "validate", "--table", "gis.e")
	assert.Equal(t, exitOK, r.Code, r.Stdout+r.Stderr)
}
