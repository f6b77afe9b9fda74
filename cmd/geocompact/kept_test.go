package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/delta/deltatest"
	"github.com/geocompact/geocompact/table/catalogs"
)

// TestExpireOutsideLocationCLI: expire lists a replaced file registered
// outside the table location as kept, with the flag that deletes it, and
// --delete-outside-location deletes it.
func TestExpireOutsideLocationCLI(t *testing.T) {
	t.Parallel()
	wh := generated(t, 2)
	cat, err := catalogs.Open(t.Context(), catalogs.Spec{Warehouse: wh})
	require.NoError(t, err)
	tbl, err := catalogs.LoadTable(t.Context(), cat, "geo.t")
	require.NoError(t, err)
	tasks, err := tbl.Scan().PlanFiles(t.Context())
	require.NoError(t, err)
	b, err := os.ReadFile(strings.TrimPrefix(tasks[0].File.FilePath(), "file://"))
	require.NoError(t, err)
	outside := filepath.Join(t.TempDir(), "in-place.parquet")
	require.NoError(t, os.WriteFile(outside, b, 0o644))
	tx := tbl.NewTransaction()
	require.NoError(t, tx.AddFiles(t.Context(), []string{outside}, nil, false))
	_, err = tx.Commit(t.Context())
	require.NoError(t, err)
	r := runCLI(t, wh, false, "rewrite", "--table", "geo.t", "--option", "rewrite-all")
	require.Equal(t, exitOK, r.Code, r.Stderr)

	r = runCLI(t, wh, false, "expire", "--table", "geo.t", "--older-than", "0s", "--force", "--dry-run")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	assert.Regexp(t, `\n\nKEPT +KIND +BYTES +PATH\noutside-location +data +\d+ +`+outside, r.Stdout)
	assert.Contains(t, r.Stdout, "kept 1 files: not deleted; 1 outside the table location (pass --delete-outside-location")

	r = runCLI(t, wh, false, "expire", "--table", "geo.t", "--older-than", "0s", "--force", "--delete-outside-location")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	assert.NotContains(t, r.Stdout, "KEPT")
	assert.Contains(t, r.Stdout, outside)
	assert.NoFileExists(t, outside)
}

// TestVacuumKeptLinksCLI: vacuum lists a link to a directory as kept, in
// the table and in the summary, and leaves it.
func TestVacuumKeptLinksCLI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	deltatest.Fragmented(t, dir, 2, 10, deltatest.Options{})
	link := filepath.Join(dir, "elsewhere")
	require.NoError(t, os.Symlink(t.TempDir(), link))
	r := runCLI(t, "", false, "vacuum", "--delta", dir, "--retain", "0h", "--force")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	assert.Regexp(t, `KEPT +PATH\nlink-to-directory +elsewhere\n`, r.Stdout)
	assert.Contains(t, r.Stdout, "kept 1 symbolic links")
	_, err := os.Lstat(link)
	assert.NoError(t, err)
}
