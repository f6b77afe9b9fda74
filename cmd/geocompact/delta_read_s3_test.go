package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/delta/deltatest"
)

// TestDeltaReadCommandsS3 runs validate, inspect and metrics on a Delta
// table on the loopback S3 server.
func TestDeltaReadCommandsS3(t *testing.T) {
	loc, tbl := s3DeltaTable(t)
	deltatest.CreateIn(t, tbl, deltatest.Options{Partitioned: true})
	deltatest.Append(t, tbl,
		deltatest.WriteFile(t, tbl, "a.parquet", "x", 0, deltatest.Point(t, 1, 2), deltatest.Point(t, 3, 4)),
		deltatest.WriteFile(t, tbl, "b.parquet", "y", 2, deltatest.Point(t, 5, 6)))

	r := runCLI(t, "", false, "validate", "--delta", loc)
	require.Equal(t, exitOK, r.Code, r.Stdout+r.Stderr)
	assert.Contains(t, r.Stdout, "3 rows, ok")

	r = runCLI(t, "", false, "inspect", "files", "--delta", loc)
	require.Equal(t, exitOK, r.Code, r.Stderr)
	assert.Len(t, strings.Split(strings.TrimSpace(r.Stdout), "\n"), 3, r.Stdout)

	r = runCLI(t, "", false, "inspect", "history", "--delta", loc)
	require.Equal(t, exitOK, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "WRITE")

	r = runCLI(t, "", false, "metrics", "--delta", loc)
	require.Equal(t, exitOK, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "part=y")
}
