package main

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAdviseShortHistory checks that advise on a table whose commits came
// seconds apart says the rate is unknown and how much history it needs,
// and shows sizes with units on a terminal.
func TestAdviseShortHistory(t *testing.T) {
	t.Parallel()
	wh := generated(t, 10)
	r := runCLI(t, wh, true, "advise", "--table", "geo.t")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "commits per hour  unknown: the history holds 10 ingest commits over")
	assert.Contains(t, r.Stdout, "needs at least 3 over at least 30m")
	assert.NotContains(t, r.Stdout, "ingest per hour")
	assert.Regexp(t, `target-file-size-bytes\s+[\d.]+ MiB`, r.Stdout)
}

// TestHumanOutputUsesUnits checks that on a terminal the audit commands
// show sizes and ages with units, never the raw byte counts scripts get
// from piped output and JSON.
func TestHumanOutputUsesUnits(t *testing.T) {
	t.Parallel()
	wh := generated(t, 6)
	r := runCLI(t, wh, false, "--json", "metrics", "--table", "geo.t")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	var m struct {
		TotalBytes   int64   `json:"total_bytes"`
		AvgFileBytes int64   `json:"avg_file_bytes"`
		OldestAge    float64 `json:"oldest_snapshot_age_seconds"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &m))
	require.Positive(t, m.TotalBytes)
	raw := []string{strconv.FormatInt(m.TotalBytes, 10), strconv.FormatInt(m.AvgFileBytes, 10)}

	piped := runCLI(t, wh, false, "metrics", "--table", "geo.t")
	assert.Regexp(t, `(^|\s)`+raw[0]+`(\s|$)`, piped.Stdout, "piped output keeps raw numbers for scripts")

	policy := filepath.Join(t.TempDir(), "p.yaml")
	writeFile(t, policy, "gate:\n  min-avg-file-bytes: 1\n")
	writeFile(t, filepath.Join(wh, "geo.db", "t", "data", "orphan.parquet"), strings.Repeat("x", 5000))
	time.Sleep(10 * time.Millisecond)
	for _, args := range [][]string{
		{"metrics", "--table", "geo.t"},
		{"inspect", "partitions", "--table", "geo.t"},
		{"expire", "--table", "geo.t", "--older-than", "0s", "--retain-last", "1", "--force", "--dry-run"},
		{"orphans", "--table", "geo.t", "--older-than", "0s", "--force", "--dry-run"},
		{"maintain", "--table", "geo.t", "--policy", policy},
	} {
		r := runCLI(t, wh, true, args...)
		require.Equal(t, exitOK, r.Code, "%v: %s", args, r.Stderr)
		assert.Regexp(t, `\d (B|KiB|MiB)\b`, r.Stdout, args)
		for _, n := range raw {
			// A whole field, not digits inside a snapshot id or a file name.
			assert.NotRegexp(t, `(^|\s)`+n+`(\s|$)`, r.Stdout, "%v shows a raw byte count", args)
		}
	}
	r = runCLI(t, wh, true, "maintain", "--table", "geo.t", "--policy", policy)
	require.Equal(t, exitOK, r.Code, r.Stderr)
	assert.Regexp(t, `oldest snapshot age\s+\d+(\.\d+)?(ms|s|m\d+s)\s`, r.Stdout)
}
