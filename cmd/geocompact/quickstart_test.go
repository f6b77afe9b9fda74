package main

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countLocalFiles counts the regular files under dir.
func countLocalFiles(t testing.TB, dir string) int {
	t.Helper()
	n := 0
	require.NoError(t, filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			n++
		}
		return err
	}))
	return n
}

// TestQuickstartRerunAndNextStep runs quickstart twice: the second run
// deletes the files of the demo table it replaces, the output names no
// empty curve, points to bench, ingest and alter, and its suggested next
// step works when run right away.
func TestQuickstartRerunAndNextStep(t *testing.T) {
	wh := t.TempDir()
	args := []string{"quickstart", "--rows", "6000", "--commits", "12", "--files", "4", "--windows", "3"}
	r := runCLI(t, wh, false, args...)
	require.Equal(t, exitOK, r.Code, r.Stderr)
	once := countLocalFiles(t, wh)
	r = runCLI(t, wh, false, args...)
	require.Equal(t, exitOK, r.Code, r.Stderr)
	assert.Equal(t, once, countLocalFiles(t, wh), "a rerun leaves no files of the replaced demo table")

	assert.NotContains(t, r.Stdout, "()", "no empty curve arguments")
	for _, want := range []string{" bench --table NS.T", " ingest --table NS.T", " alter --table NS.T"} {
		assert.Contains(t, r.Stdout, want)
	}
	var next string
	lines := strings.Split(r.Stdout, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "next:") && i+1 < len(lines) {
			next = strings.TrimSpace(lines[i+1])
		}
	}
	require.True(t, strings.HasPrefix(next, "geocompact "), "a next step is suggested: %q", r.Stdout)
	step := runCLI(t, wh, false, strings.Fields(next)[1:]...)
	assert.Equal(t, exitOK, step.Code, "%s: %s", next, step.Stderr)
	assert.NotEmpty(t, step.Stdout, next)
}

// TestQuickstartNextAfterGoRun: after `go run ./cmd/geocompact
// quickstart` no geocompact binary is installed, so the next steps say
// how to run it the same way.
func TestQuickstartNextAfterGoRun(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "go run ./cmd/geocompact", invokedAs("/tmp/go-build3141592/b001/exe/geocompact"))
	assert.Equal(t, "geocompact", invokedAs("/usr/local/bin/geocompact"))
	assert.Equal(t, "geocompact", invokedAs(""))
}
