package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/delta/deltatest"
	"github.com/geocompact/geocompact/table/layouts"
)

// TestSQLCLIAlter: ALTER TABLE through sql leaves a table exactly as the
// alter command leaves its twin, prints what was recorded, and a refused
// statement exits 2 with its position and commits nothing.
func TestSQLCLIAlter(t *testing.T) {
	wh := t.TempDir()
	for _, name := range []string{"geo.a", "geo.b"} {
		r := runCLI(t, wh, false, "generate", "--table", name, "--rows", "300", "--commits", "2")
		require.Equal(t, exitOK, r.Code, r.Stderr)
	}
	r := runCLI(t, wh, false, "alter", "--table", "geo.a", "--curve", "hilbert", "--set", "write.target-file-size-bytes=40KiB", "--set", "owner=gis")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	r = runCLI(t, wh, false, "sql", "ALTER TABLE geo.b WRITE ORDERED BY hilbert();\n"+
		"ALTER TABLE geocompact.geo.b SET TBLPROPERTIES ('write.target-file-size-bytes' = '40KiB', owner = 'gis')")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	for _, want := range []string{
		"statement 1 (line 1): ALTER TABLE geocompact.geo.b\nlayout     recorded_in                       sort_order\nhilbert()  table property geocompact.layout  unsorted\n",
		"statement 2 (line 2): ALTER TABLE geocompact.geo.b\n",
		"set owner = gis\nset write.target-file-size-bytes = 40960\n(1 row)",
	} {
		assert.Contains(t, r.Stdout, want)
	}
	a, b := ingestLoadTable(t, wh, "geo.a"), ingestLoadTable(t, wh, "geo.b")
	assert.Equal(t, a.Properties(), b.Properties())
	assert.Equal(t, "hilbert()", b.Properties()[layouts.Prop])

	require.Equal(t, exitOK, runCLI(t, wh, false, "alter", "--table", "geo.a", "--unsorted").Code)
	require.Equal(t, exitOK, runCLI(t, wh, false, "sql", "ALTER TABLE geo.b WRITE UNORDERED").Code)
	a, b = ingestLoadTable(t, wh, "geo.a"), ingestLoadTable(t, wh, "geo.b")
	assert.Equal(t, a.Properties(), b.Properties())
	assert.NotContains(t, b.Properties(), layouts.Prop)

	before := b.Metadata().LastUpdatedMillis()
	for _, tc := range []struct {
		script string
		want   []string
	}{
		{"ALTER TABLE geo.b WRITE UNORDERED;\nALTER TABLE geo.b WRITE ORDERED BY bucket(4, id)", []string{"line 2, column 36", "bucket(…) is not supported"}},
		{"ALTER TABLE geo.b WRITE UNORDERED;\nALTER TABLE geo.b WRITE ORDERED BY nope", []string{"statement 2", `no column "nope"`}},
		{"ALTER TABLE geo.b SET TBLPROPERTIES ('write.target-file-size-bytes' = 'lots')", []string{"statement 1 (line 1, ALTER TABLE)", "write.target-file-size-bytes"}},
	} {
		r := runCLI(t, wh, false, "sql", tc.script)
		assert.Equal(t, exitUsage, r.Code, "%s: %s", tc.script, r.Stderr)
		for _, w := range tc.want {
			assert.Contains(t, r.Stderr, w, tc.script)
		}
		assert.Empty(t, r.Stdout, tc.script)
	}
	assert.Equal(t, before, ingestLoadTable(t, wh, "geo.b").Metadata().LastUpdatedMillis(), "nothing was committed")
}

// TestSQLCLIAlterDelta records a layout on a Delta table through sql as
// alter --delta does.
func TestSQLCLIAlterDelta(t *testing.T) {
	tbl, dir := spatialDelta(t, 2)
	r := runCLI(t, "", false, "sql", "ALTER TABLE delta.`"+dir+"` WRITE ORDERED BY hilbert(bbox_minx, bbox_miny)")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "statement 1 (line 1): ALTER TABLE on Delta table "+dir+"\nlayout")
	assert.Contains(t, r.Stdout, "hilbert(bbox_minx, bbox_miny)  table property geocompact.layout  3")
	assert.Equal(t, "hilbert(bbox_minx, bbox_miny)", deltatest.Snapshot(t, tbl).Metadata.Configuration[layouts.Prop])

	r = runCLI(t, "", false, "sql", "ALTER TABLE delta.`"+dir+"` SET TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')")
	assert.Equal(t, exitUsage, r.Code)
	assert.Contains(t, r.Stderr, "protocol upgrade")
	assert.Equal(t, int64(3), deltatest.Snapshot(t, tbl).Version, "the refusal committed nothing")

	r = runCLI(t, "", false, "sql", "ALTER TABLE delta.`"+dir+"` SET TBLPROPERTIES ('delta.deletedFileRetentionDuration' = 'interval 213504 days')")
	assert.Equal(t, exitUsage, r.Code)
	assert.Contains(t, r.Stderr, "delta.deletedFileRetentionDuration")
	assert.Contains(t, r.Stderr, "over the maximum of 106751 days")
	assert.Equal(t, int64(3), deltatest.Snapshot(t, tbl).Version, "the refusal committed nothing")
}
