package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/validate/validatetest"
)

func deltaCommits(t testing.TB, loc string) int {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(loc, "_delta_log", "*.json"))
	require.NoError(t, err)
	return len(m)
}

func TestIngestDeltaCLI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	loc := filepath.Join(t.TempDir(), "pts")
	good := writeGeoParquet(t, dir, "good", validatetest.File{Rows: validatetest.Points(6), Geo: validatetest.Geo(""), Extra: true})

	r := runCLI(t, "", false, "ingest", "--delta", loc, good)
	require.Equal(t, exitError, r.Code, r.Stderr)
	assert.Contains(t, r.Stderr, "no Delta table at "+loc)
	assert.Contains(t, r.Stderr, "use --create")

	r = runCLI(t, "", false, "ingest", "--delta", loc, "--create", good)
	require.Equal(t, exitOK, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "LOCATION")
	assert.Regexp(t, `true\s+1\s+1\s+6\s+0\n`, r.Stdout)

	// A re-run is a no-op that says so.
	r = runCLI(t, "", false, "--json", "ingest", "--delta", loc, good)
	require.Equal(t, exitOK, r.Code, r.Stderr)
	assert.Contains(t, r.Stderr, "already ingested in version 0")
	assert.Contains(t, r.Stderr, "nothing to ingest")
	var res deltaIngestJSON
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &res))
	assert.Equal(t, 0, res.Files)
	assert.Equal(t, int64(0), res.Version)
	assert.Equal(t, 1, deltaCommits(t, loc))

	// Invalid geometry: exit 3, the report on stdout, nothing written.
	bad := writeGeoParquet(t, dir, "bad", validatetest.File{Rows: append(validatetest.Points(2), validatetest.Row{WKB: validatetest.Point(1, 1), BBox: validatetest.Box(9, 9, 9, 9)}), Geo: validatetest.Geo(""), Extra: true})
	r = runCLI(t, "", false, "ingest", "--delta", loc, bad)
	require.Equal(t, exitViolation, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "bbox.mismatch")
	assert.Contains(t, r.Stderr, "nothing was written")
	assert.Equal(t, 1, deltaCommits(t, loc))

	// A file that does not fit the table's schema is refused by name.
	noID := writeGeoParquet(t, dir, "noid", validatetest.File{Rows: validatetest.Points(2), Geo: validatetest.Geo("")})
	r = runCLI(t, "", false, "ingest", "--delta", loc, noID)
	require.Equal(t, exitError, r.Code, r.Stderr)
	assert.Contains(t, r.Stderr, `column "id" is required by the table but missing`)
	assert.Equal(t, 1, deltaCommits(t, loc))

	tbl, err := delta.OpenLocal(loc)
	require.NoError(t, err)
	s, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	assert.Len(t, s.Files, 1)
}

func TestIngestDeltaCLIUsage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	f := writeGeoParquet(t, dir, "f", validatetest.File{Rows: validatetest.Points(2), Geo: validatetest.Geo(""), Extra: true})
	loc := t.TempDir()
	for name, args := range map[string][]string{
		"both targets":   {"--table", "gis.t", "--delta", loc},
		"no target":      {},
		"format version": {"--delta", loc, "--create", "--format-version", "3"},
		"add columns":    {"--delta", loc, "--add-columns"},
		"transform":      {"--delta", loc, "--create", "--partition-by", "days(id)"},
	} {
		t.Run(name, func(t *testing.T) {
			r := runCLI(t, "", false, append(append([]string{"ingest"}, args...), f)...)
			assert.Equal(t, exitUsage, r.Code, r.Stderr)
			assert.Equal(t, 0, deltaCommits(t, loc))
		})
	}
}
