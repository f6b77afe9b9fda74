package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/inspect"
	"github.com/geocompact/geocompact/validate/validatetest"
)

func TestTablesLists(t *testing.T) {
	t.Parallel()
	wh, dir := t.TempDir(), t.TempDir()
	p := writeGeoParquet(t, dir, "pts", validatetest.File{Rows: validatetest.Points(3), Geo: validatetest.Geo(""), Extra: true})
	for _, name := range []string{"gis.roads", "gis.parcels", "raw.pings"} {
		r := runCLI(t, wh, false, "ingest", "--table", name, "--create", "--allow-duplicates", p)
		require.Equal(t, exitOK, r.Code, r.Stderr)
	}
	r := runCLI(t, wh, false, "tables")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	assert.Regexp(t, `^NAMESPACE\s+TABLE\ngis\s+parcels\ngis\s+roads\nraw\s+pings\n$`, r.Stdout)

	r = runCLI(t, wh, false, "--json", "tables", "raw")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	var got []inspect.Namespace
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &got))
	assert.Equal(t, []inspect.Namespace{{Name: "raw", Tables: []string{"pings"}}}, got)

	r = runCLI(t, wh, false, "tables", "gos")
	assert.Equal(t, exitError, r.Code)
	assert.Contains(t, r.Stderr, "namespace does not exist: gos; did you mean gis?")
	r = runCLI(t, wh, false, "tables", "elsewhere")
	assert.Equal(t, exitError, r.Code)
	assert.Contains(t, r.Stderr, "namespace does not exist: elsewhere; run geocompact tables to list the namespaces")
}
