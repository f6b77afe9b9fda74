//go:build linux

package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/validate/validatetest"
)

// TestFirstHourSession replays a pipeline engineer's first hour: ingest a
// file and ingest it again (a retried delivery), make the usual typos, try
// a sort order over a missing column, and watch rewrite and maintain on a
// terminal. Each step must name the problem and the fix, and progress must
// show on the terminal only.
func TestFirstHourSession(t *testing.T) {
	wh, dir := t.TempDir(), t.TempDir()
	var files []string
	for i := range 6 {
		files = append(files, writeGeoParquet(t, dir, "batch-"+string(rune('a'+i)), validatetest.File{
			Rows: validatetest.Points(200 + i), Geo: validatetest.Geo(""), Extra: true}))
	}

	// Ingest, then the same delivery again: skipped, exit 0.
	r := runCLI(t, wh, false, "ingest", "--table", "gis.pings", "--create", "--partition-by", "bucket(2, id)", files[0])
	require.Equal(t, exitOK, r.Code, r.Stderr)
	r = runCLI(t, wh, false, "ingest", "--table", "gis.pings", files[0])
	require.Equal(t, exitOK, r.Code, r.Stderr)
	assert.Contains(t, r.Stderr, "already ingested")
	for _, f := range files[1:] {
		require.Equal(t, exitOK, runCLI(t, wh, false, "ingest", "--table", "gis.pings", f).Code)
	}
	assert.Equal(t, int64(200+201+202+203+204+205), ingestTableRows(t, ingestLoadTable(t, wh, "gis.pings")))

	// Typos: each one line, exit 1 or 2, naming what was meant.
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"ingest", "--table", "gis.pigns", files[0]}, exitError, "did you mean gis.pings?"},
		{[]string{"rewrite", "--table", "gis.ping"}, exitError, "did you mean gis.pings?"},
		{[]string{"metrics", "--table", "gis.pins"}, exitError, "did you mean gis.pings?"},
		{[]string{"rewrit", "--table", "gis.pings"}, exitUsage, "Did you mean this? rewrite"},
		{[]string{"rewrite", "--table", "gis.pings", "--curve", "hilbret"}, exitUsage, "did you mean hilbert?"},
		{[]string{"rewrite", "--table", "gis.pings", "--option", "target-file-size=128MiB"}, exitUsage, "did you mean target-file-size-bytes?"},
		{[]string{"ingest", "--table", "gis.pings", "--create", "--partition-by", "dayz(ts)", files[0]}, exitUsage, "did you mean day?"},
		{[]string{"tables", "gsi"}, exitError, "did you mean gis?"},
	} {
		r := runCLI(t, wh, false, tc.args...)
		assert.Equal(t, tc.code, r.Code, "%v: %s", tc.args, r.Stderr)
		assert.Contains(t, r.Stderr, tc.want, tc.args)
		assert.Equal(t, 1, strings.Count(r.Stderr, "\n"), "%v: one line: %s", tc.args, r.Stderr)
		assert.NotRegexp(t, internalPrefixRE, r.Stderr, tc.args)
	}

	// A sort order over a missing column. The real run refuses it naming
	// the column and writes nothing; the dry run fails the same way, before
	// any data is read, listing the table's columns.
	snap := ingestLoadTable(t, wh, "gis.pings").CurrentSnapshot().SnapshotID
	r = runCLI(t, wh, false, "rewrite", "--table", "gis.pings", "--sort-order", "nosuch")
	assert.Equal(t, exitUsage, r.Code, r.Stderr)
	assert.Contains(t, r.Stderr, `"nosuch"`)
	r = runCLI(t, wh, false, "rewrite", "--table", "gis.pings", "--sort-order", "nosuch", "--dry-run")
	assert.Equal(t, exitUsage, r.Code, r.Stderr)
	assert.Contains(t, r.Stderr, `no column "nosuch"; its columns are `)
	assert.Equal(t, snap, ingestLoadTable(t, wh, "gis.pings").CurrentSnapshot().SnapshotID, "nothing was committed")

	// Progress on a terminal, none with --quiet, none when piped.
	code, out, term := runOnTerminal(t, wh, "rewrite", "--table", "gis.pings", "--curve", "hilbert", "--option", "rewrite-all")
	require.Equal(t, exitOK, code, term)
	assert.Contains(t, term, "rewrite: 0/")
	assert.Contains(t, term, "groups done")
	assert.NotContains(t, out, "groups done", "progress never goes to stdout")
	code, _, term = runOnTerminal(t, wh, "--quiet", "rewrite", "--table", "gis.pings", "--curve", "hilbert", "--option", "rewrite-all")
	require.Equal(t, exitOK, code, term)
	assert.Empty(t, term, "--quiet silences progress")
	policy := filepath.Join(dir, "policy.yaml")
	writeFile(t, policy, "gate:\n  min-avg-file-bytes: 1073741824\n")
	code, _, term = runOnTerminal(t, wh, "maintain", "--table", "gis.pings", "--policy", policy)
	require.Equal(t, exitOK, code, term)
	assert.Contains(t, term, "maintain: step 1/8 measure")
	r = runCLI(t, wh, false, "maintain", "--table", "gis.pings", "--policy", policy)
	require.Equal(t, exitOK, r.Code, r.Stderr)
	assert.Empty(t, r.Stderr, "nothing extra when piped")
}
