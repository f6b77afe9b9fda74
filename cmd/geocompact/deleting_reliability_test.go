package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/delta/deltatest"
	"github.com/geocompact/geocompact/internal/testing/reliability"
	"github.com/geocompact/geocompact/maintain"
	"github.com/geocompact/geocompact/table/catalogs"
)

// The path forms a table may name its data files by, each crossed with
// every command that deletes files, on Iceberg and Delta tables.
const (
	formRelative    = "relative"
	formAbsolute    = "absolute-path"
	formFileURI     = "file-uri"
	formPercent     = "percent-encoded"
	formLinkToFile  = "link-to-file"
	formLinkToDir   = "link-to-directory"
	formOutside     = "outside-location"
	deletingAgeBack = 30 * 24 * time.Hour
)

// deletingCase is one table laid out for one path form: where the table
// lives, the directory outside it whose every file must survive, and the
// old orphan inside it a removal must delete.
type deletingCase struct {
	form, dir, outside, orphan string
}

// TestDeletingCommandsPathForms crosses path forms with expire, orphans,
// vacuum, maintain and maintain --delta. After each command every live
// file is still there, the table reads back the same rows, nothing
// outside the table location changed (not even a file a link points at),
// and an old orphan inside the table is gone: the command did delete.
func TestDeletingCommandsPathForms(t *testing.T) {
	if testing.Short() {
		t.Skip("crosses every deleting command with every path form")
	}
	icebergForms := []string{formAbsolute, formFileURI, formPercent, formLinkToFile, formLinkToDir, formOutside}
	for _, cmd := range []string{"expire", "sql-expire", "orphans", "maintain"} {
		for _, form := range icebergForms {
			if cmd == "sql-expire" && form != formOutside {
				continue // the same code as expire; one case shows the CALL reports what it kept
			}
			t.Run("iceberg/"+cmd+"/"+form, func(t *testing.T) { icebergDeleting(t, cmd, form) })
		}
	}
	deltaForms := []string{formRelative, formFileURI, formPercent, formLinkToFile, formLinkToDir, formOutside}
	for _, cmd := range []string{"vacuum", "maintain"} {
		for _, form := range deltaForms {
			t.Run("delta/"+cmd+"/"+form, func(t *testing.T) { deltaDeleting(t, cmd, form) })
		}
	}
}

// newDeletingCase makes the outside directory with a bystander file and
// the planted orphan's path.
func newDeletingCase(t *testing.T, form, dir, orphanDir string) *deletingCase {
	t.Helper()
	c := &deletingCase{form: form, dir: dir, outside: t.TempDir(), orphan: filepath.Join(orphanDir, "orphan-old.parquet")}
	writeFile(t, filepath.Join(c.outside, "bystander.parquet"), "not the table's")
	require.NoError(t, os.MkdirAll(filepath.Join(c.outside, "linked"), 0o755))
	return c
}

// place puts the data file src where the form says, moving or copying it,
// and returns the path to register it by. inTable is the directory inside
// the table the file belongs in; rel is its name relative to the table
// directory, used by the relative form.
func (c *deletingCase) place(t *testing.T, src, inTable, base string, move bool) (abs, named string) {
	t.Helper()
	put := func(dst string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(dst), 0o755))
		if move {
			require.NoError(t, os.Rename(src, dst))
			return
		}
		b, err := os.ReadFile(src)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(dst, b, 0o644))
	}
	rel, err := filepath.Rel(c.dir, filepath.Join(inTable, base))
	require.NoError(t, err)
	switch c.form {
	case formRelative:
		abs = filepath.Join(inTable, base)
		put(abs)
		return abs, filepath.ToSlash(rel)
	case formAbsolute:
		abs = filepath.Join(inTable, base)
		put(abs)
		return abs, abs
	case formFileURI:
		abs = filepath.Join(inTable, base)
		put(abs)
		return abs, (&url.URL{Scheme: "file", Path: abs}).String()
	case formPercent:
		abs = filepath.Join(inTable, "a b%2e%2e"+base)
		put(abs)
		return abs, (&url.URL{Scheme: "file", Path: abs}).String()
	case formLinkToFile:
		target := filepath.Join(c.outside, "linked", base)
		put(target)
		abs = filepath.Join(inTable, "link-"+base)
		require.NoError(t, os.Symlink(target, abs))
		return abs, abs
	case formLinkToDir:
		put(filepath.Join(c.outside, "linked", base))
		link := filepath.Join(inTable, "linked-dir")
		if _, err := os.Lstat(link); err != nil {
			require.NoError(t, os.Symlink(filepath.Join(c.outside, "linked"), link))
		}
		abs = filepath.Join(link, base)
		return abs, abs
	case formOutside:
		abs = filepath.Join(c.outside, "registered", base)
		put(abs)
		return abs, (&url.URL{Scheme: "file", Path: abs}).String()
	}
	t.Fatalf("unknown form %s", c.form)
	return "", ""
}

// ageTree sets every file and link under dir (links themselves, not their
// targets) back by deletingAgeBack, and plants the old orphan.
func (c *deletingCase) ageTree(t *testing.T) {
	t.Helper()
	writeFile(t, c.orphan, "orphan")
	ts := time.Now().Add(-deletingAgeBack)
	tv := []unix.Timeval{unix.NsecToTimeval(ts.UnixNano()), unix.NsecToTimeval(ts.UnixNano())}
	require.NoError(t, filepath.WalkDir(c.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		return unix.Lutimes(p, tv)
	}))
}

// outsideTree maps every file and link under the outside directory to
// its size and modification time.
func (c *deletingCase) outsideTree(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(c.outside, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		st, err := os.Lstat(p)
		if err != nil {
			return err
		}
		out[p] = fmt.Sprintf("%d bytes, %s, %s", st.Size(), st.Mode(), st.ModTime())
		return nil
	}))
	return out
}

// icebergDeleting runs one deleting command on an Iceberg table with one
// data file registered in the given form.
func icebergDeleting(t *testing.T, cmd, form string) {
	wh := generated(t, 3)
	cat, err := catalogs.Open(t.Context(), catalogs.Spec{Warehouse: wh})
	require.NoError(t, err)
	tbl, err := catalogs.LoadTable(t.Context(), cat, "geo.t")
	require.NoError(t, err)
	dir := strings.TrimPrefix(tbl.Location(), "file://")
	c := newDeletingCase(t, form, dir, filepath.Join(dir, "data"))
	tasks, err := tbl.Scan().PlanFiles(t.Context())
	require.NoError(t, err)
	src := strings.TrimPrefix(tasks[0].File.FilePath(), "file://")
	_, named := c.place(t, src, filepath.Join(dir, "data"), "registered.parquet", false)
	tx := tbl.NewTransaction()
	require.NoError(t, tx.AddFiles(t.Context(), []string{named}, nil, false))
	_, err = tx.Commit(t.Context())
	require.NoError(t, err)
	c.ageTree(t)

	tbl, err = catalogs.LoadTable(t.Context(), cat, "geo.t")
	require.NoError(t, err)
	want, err := reliability.TableDigest(t.Context(), tbl, 0)
	require.NoError(t, err)
	outside := c.outsideTree(t)

	var stdout string
	switch cmd {
	case "expire":
		r := runCLI(t, wh, false, "rewrite", "--table", "geo.t", "--option", "rewrite-all")
		require.Equal(t, exitOK, r.Code, r.Stderr)
		r = runCLI(t, wh, false, "--json", "expire", "--table", "geo.t", "--older-than", "0s", "--force")
		require.Equal(t, exitOK, r.Code, r.Stderr)
		stdout = r.Stdout
		var res maintain.ExpireResult
		require.NoError(t, json.Unmarshal([]byte(r.Stdout), &res))
		assert.NotZero(t, res.DeletedDataFilesCount, "expire deleted no replaced file")
		if form == formOutside || form == formLinkToDir {
			require.Len(t, res.Kept, 1, "the replaced file outside the table is kept and reported")
			assert.Equal(t, maintain.KeepOutsideLocation, res.Kept[0].Reason)
		}
	case "sql-expire":
		r := runCLI(t, wh, false, "rewrite", "--table", "geo.t", "--option", "rewrite-all")
		require.Equal(t, exitOK, r.Code, r.Stderr)
		call := fmt.Sprintf("CALL system.expire_snapshots(table => 'geo.t', older_than => TIMESTAMP '%s', retain_last => 1)",
			time.Now().Add(time.Second).UTC().Format("2006-01-02 15:04:05"))
		time.Sleep(1100 * time.Millisecond) // older_than must not lie in the future
		r = runCLI(t, wh, false, "sql", "--force", call)
		require.Equal(t, exitOK, r.Code, r.Stderr)
		stdout = r.Stdout
		if form == formOutside || form == formLinkToDir {
			assert.Contains(t, r.Stdout, "kept 1 files", "the replaced file outside the table is reported")
			assert.Contains(t, r.Stdout, maintain.KeepOutsideLocation)
		}
	case "orphans":
		r := runCLI(t, wh, false, "--json", "orphans", "--table", "geo.t")
		require.Equal(t, exitOK, r.Code, r.Stderr)
		stdout = r.Stdout
	case "maintain":
		r := runCLI(t, wh, false, "--json", "maintain", "--table", "geo.t")
		require.Equal(t, exitOK, r.Code, r.Stderr)
		stdout = r.Stdout
		assert.Contains(t, r.Stdout, `"step": "rewrite"`)
	}
	if !strings.HasSuffix(cmd, "expire") {
		assert.NoFileExists(t, c.orphan, "the old orphan was not removed:\n%s", stdout)
	}
	if form == formLinkToDir && !strings.HasSuffix(cmd, "expire") {
		assert.Contains(t, stdout, maintain.KeepLinkToDirectory, "the link to a directory is reported")
	}
	tbl, err = catalogs.LoadTable(t.Context(), cat, "geo.t")
	require.NoError(t, err)
	missing, err := reliability.MissingFiles(t.Context(), tbl)
	require.NoError(t, err)
	assert.Empty(t, missing, "live files deleted:\n%s", stdout)
	got, err := reliability.TableDigest(t.Context(), tbl, 0)
	require.NoError(t, err)
	assert.True(t, want.Equal(got), "rows changed: %s, want %s", got, want)
	assert.Equal(t, outside, c.outsideTree(t), "files outside the table changed:\n%s", stdout)
}

// deltaDeleting runs vacuum or maintain --delta on a Delta table with one
// data file added in the given form.
func deltaDeleting(t *testing.T, cmd, form string) {
	dir := t.TempDir()
	tbl := deltatest.Fragmented(t, dir, 3, 40, deltatest.Options{})
	c := newDeletingCase(t, form, dir, dir)
	add := deltatest.WriteFile(t, tbl, "staged.parquet", "", 1000, deltatest.Point(t, 1, 2), deltatest.Point(t, 3, 4))
	abs, named := c.place(t, filepath.Join(dir, "staged.parquet"), dir, "added.parquet", true)
	switch form {
	case formPercent, formLinkToFile, formLinkToDir:
		// Delta's add paths are relative URIs: the name percent-encoded.
		rel, err := filepath.Rel(dir, abs)
		require.NoError(t, err)
		named = (&url.URL{Path: filepath.ToSlash(rel)}).EscapedPath()
	}
	add.Path = named
	deltatest.Append(t, tbl, add)
	c.ageTree(t)
	rows := deltatest.LiveRows(t, tbl)
	outside := c.outsideTree(t)

	var r cliResult
	switch cmd {
	case "vacuum":
		// Once with the added file live, once after it was replaced.
		r = runCLI(t, "", false, "vacuum", "--delta", dir, "--retain", "0h", "--force")
		require.Equal(t, exitOK, r.Code, r.Stderr)
		assert.Equal(t, rows, deltatest.LiveRows(t, tbl), "rows changed or live files lost:\n%s", r.Stdout)
		r = runCLI(t, "", false, "rewrite", "--delta", dir, "--option", "rewrite-all")
		require.Equal(t, exitOK, r.Code, r.Stderr)
		r = runCLI(t, "", false, "--json", "vacuum", "--delta", dir, "--retain", "0h", "--force")
		require.Equal(t, exitOK, r.Code, r.Stderr)
		var res delta.VacuumResult
		require.NoError(t, json.Unmarshal([]byte(r.Stdout), &res))
		if form == formLinkToDir {
			require.Len(t, res.Kept, 1, r.Stdout)
			assert.Equal(t, delta.LinkDirectory, res.Kept[0].Reason)
		}
	case "maintain":
		r = runCLI(t, "", false, "--json", "maintain", "--delta", dir)
		require.Equal(t, exitOK, r.Code, r.Stderr)
		assert.Contains(t, r.Stdout, `"step": "rewrite"`)
	}
	assert.NoFileExists(t, c.orphan, "the old orphan was not removed:\n%s", r.Stdout)
	assert.Equal(t, rows, deltatest.LiveRows(t, tbl), "rows changed or live files lost:\n%s", r.Stdout)
	assert.Equal(t, outside, c.outsideTree(t), "files outside the table changed:\n%s", r.Stdout)
}
