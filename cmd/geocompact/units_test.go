package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAdviseShortHistory checks that advise on a table whose commits came
// seconds apart says the rate is unknown and how much history it needs,
// and shows sizes with units on a terminal.
func TestAdviseShortHistory(t *testing.T) {
	wh := generated(t, 10)
	r := runCLI(t, wh, true, "advise", "--table", "geo.t")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "commits per hour  unknown: the history holds 10 ingest commits over")
	assert.Contains(t, r.Stdout, "needs at least 3 over at least 30m")
	assert.NotContains(t, r.Stdout, "ingest per hour")
	assert.Regexp(t, `target-file-size-bytes\s+[\d.]+ MiB`, r.Stdout)
}
