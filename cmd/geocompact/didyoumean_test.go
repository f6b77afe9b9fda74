package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/validate/validatetest"
)

// typoCommands are the commands that read an existing --table, each with
// the table misspelled as "geo.tt"; table-creating commands (generate,
// quickstart) are left out.
func typoCommands(t testing.TB) map[string][]string {
	in := filepath.Join(t.TempDir(), "points.parquet")
	validatetest.Write(t, in, validatetest.File{Rows: validatetest.Points(5), Geo: validatetest.Geo(""), Extra: true})
	return map[string][]string{
		"ingest":            {"ingest", "--table", "geo.tt", in},
		"rewrite":           {"rewrite", "--table", "geo.tt"},
		"validate":          {"validate", "--table", "geo.tt"},
		"bench":             {"bench", "--table", "geo.tt"},
		"inspect files":     {"inspect", "files", "--table", "geo.tt"},
		"inspect snapshots": {"inspect", "snapshots", "--table", "geo.tt"},
		"metrics":           {"metrics", "--table", "geo.tt"},
		"expire":            {"expire", "--table", "geo.tt"},
		"orphans":           {"orphans", "--table", "geo.tt", "--dry-run"},
		"rewrite-manifests": {"rewrite-manifests", "--table", "geo.tt"},
		"rewrite-deletes":   {"rewrite-deletes", "--table", "geo.tt"},
		"advise":            {"advise", "--table", "geo.tt"},
		"maintain":          {"maintain", "--table", "geo.tt"},
		"alter":             {"alter", "--table", "geo.tt", "--set", "owner=gis"},
		"job plan":          {"job", "plan", "--table", "geo.tt"},
		"job work":          {"job", "work", "--job", "0123456789abcdef", "--table", "geo.tt"},
		"job next":          {"job", "next", "--job", "0123456789abcdef", "--table", "geo.tt"},
		"job commit":        {"job", "commit", "--job", "0123456789abcdef", "--table", "geo.tt"},
		"job abort":         {"job", "abort", "--job", "0123456789abcdef", "--table", "geo.tt"},
	}
}

// TestMisspelledTableDidYouMean runs every command that takes --table with
// a misspelled table: each fails with one line naming the table it meant.
func TestMisspelledTableDidYouMean(t *testing.T) {
	wh := generated(t, 2)
	cmds := typoCommands(t)
	for label, args := range cmds {
		r := runCLI(t, wh, false, args...)
		assert.Equal(t, exitError, r.Code, "%s: %s", label, r.Stderr)
		assert.Contains(t, r.Stderr, "did you mean geo.t?", label)
		assert.Equal(t, 1, strings.Count(r.Stderr, "\n"), "%s: one line: %s", label, r.Stderr)
	}
	r := runCLI(t, wh, false, "rewrite", "--table", "geo.something_else")
	assert.Contains(t, r.Stderr, "run geocompact tables", "no close table: point to the listing")

	// Every command with a --table flag that reads a table is covered.
	root := newRootCmd(&globalOptions{IO: &ioStreams{}})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		name := strings.TrimPrefix(c.CommandPath(), "geocompact ")
		if c.Flags().Lookup("table") != nil && c.Runnable() && name != "generate" && name != "quickstart" {
			_, ok := cmds[name]
			if !ok && c.HasParent() {
				_, ok = cmds[c.Parent().Name()+" files"]
			}
			assert.True(t, ok, "command %q takes --table but is not checked for did-you-mean", name)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// internalPrefixRE matches a Go package name used as a message prefix.
var internalPrefixRE = regexp.MustCompile(`\b(engine|cluster|spatial|validate|ingest|where|maintain|inspect|bench|delta): `)

// TestErrorsHaveNoPackagePrefixes runs bad invocations whose errors come
// from deep in the library: each is one line with no internal package
// prefix.
func TestErrorsHaveNoPackagePrefixes(t *testing.T) {
	wh := generated(t, 2)
	dir := t.TempDir()
	badPolicy := filepath.Join(dir, "p.yaml")
	writeFile(t, badPolicy, "gate:\n  min-avg-file-byte: 1\n")
	badWindows := filepath.Join(dir, "w.txt")
	writeFile(t, badWindows, "not a window\n")
	for _, args := range [][]string{
		{"rewrite", "--table", "geo.t", "--where", "bbox("},
		{"rewrite", "--table", "geo.t", "--where", "nosuch = 1"},
		{"rewrite", "--table", "geo.t", "--option", "target-file-size-bytes=12zz"},
		{"rewrite", "--table", "geo.t", "--option", "nosuch-option=1"},
		{"rewrite", "--table", "nodot"},
		{"rewrite", "--table", "geo.t", "--sort-order", "bbox_minx ASCC"},
		{"rewrite", "--table", "geo.t", "--curve", "hilbret"},
		{"--catalog", "nosuch", "rewrite", "--table", "geo.t"},
		{"maintain", "--table", "geo.t", "--policy", badPolicy},
		{"bench", "--table", "geo.t", "--windows", badWindows},
		{"generate", "--table", "geo.g", "--partition-by", "weeks(ts)"},
		{"validate", filepath.Join(dir, "p.yaml")},
		{"ingest", "--table", "geo.t", badPolicy},
		{"expire", "--table", "geo.t", "--older-than", "1m"},
	} {
		r := runCLI(t, wh, false, args...)
		assert.NotEqual(t, exitOK, r.Code, "%v", args)
		msg := strings.TrimSpace(r.Stderr)
		if args[0] == "validate" {
			msg = r.Stdout + r.Stderr
		}
		require.NotEmpty(t, msg, "%v", args)
		assert.NotRegexp(t, internalPrefixRE, msg, "%v", args)
		if args[0] != "validate" {
			assert.Equal(t, 1, strings.Count(r.Stderr, "\n"), "%v: one line: %s", args, r.Stderr)
		}
		t.Logf("%v -> %s", args, msg)
	}
}
