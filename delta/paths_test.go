package delta

import (
	"errors"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCanonical(t *testing.T) {
	local := Root{Dir: "/data/T"}
	s3 := Root{Bucket: "lake", Dir: "wh/T"}
	cases := []struct {
		name   string
		root   Root
		raw    string
		want   string
		inside bool
	}{
		{"relative", local, "part=1/f.parquet", "part=1/f.parquet", true},
		{"relative decoded once", local, "part=a%20b/f%2541.parquet", "part=a b/f%41.parquet", true},
		{"colon in a relative path", local, "ts=10:00/f.parquet", "ts=10:00/f.parquet", true},
		{"encoded colon is no scheme", local, "x%3A%2F%2Fy/f.parquet", "x:/y/f.parquet", true},
		{"file triple slash", local, "file:///data/T/part=1/f.parquet", "part=1/f.parquet", true},
		{"file single slash", local, "file:/data/T/f.parquet", "f.parquet", true},
		{"file localhost", local, "file://localhost/data/T/f.parquet", "f.parquet", true},
		{"file scheme in capitals", local, "FILE:///data/T/f.parquet", "f.parquet", true},
		{"file encoded", local, "file:///data/T/part=a%20b/f%2541.parquet", "part=a b/f%41.parquet", true},
		{"absolute path", local, "/data/T/./sub/../f.parquet", "f.parquet", true},
		{"dot-dot stops at the root", local, "../../etc/passwd", "etc/passwd", true},
		{"encoded dot-dot stops at the root", local, "%2e%2e%2f%2e%2e%2fetc%2fpasswd", "etc/passwd", true},
		{"encoded slash is relative", local, "%2Fetc%2Fpasswd", "etc/passwd", true},
		{"sibling with a common prefix", local, "file:///data/T2/f.parquet", "/data/T2/f.parquet", false},
		{"absolute escape", local, "file:///data/T/../U/f.parquet", "/data/U/f.parquet", false},
		{"absolute outside", local, "/elsewhere/f%20g.parquet", "/elsewhere/f g.parquet", false},
		{"s3 on a local table", local, "s3://lake/wh/T/f.parquet", "s3://lake/wh/T/f.parquet", false},
		{"other store", local, "abfss://c@a.dfs.core.windows.net/T/f.parquet", "abfss://c@a.dfs.core.windows.net/T/f.parquet", false},
		{"s3 inside", s3, "s3://lake/wh/T/part=1/f%20g.parquet", "part=1/f g.parquet", true},
		{"s3a inside", s3, "s3a://lake/wh/T/f.parquet", "f.parquet", true},
		{"s3 relative", s3, "part=1/f.parquet", "part=1/f.parquet", true},
		{"s3 other bucket", s3, "s3://other/wh/T/f.parquet", "s3://other/wh/T/f.parquet", false},
		{"s3 sibling prefix", s3, "s3://lake/wh/T2/f.parquet", "s3://lake/wh/T2/f.parquet", false},
		{"s3 escape", s3, "s3://lake/wh/T/../../f.parquet", "s3://lake/f.parquet", false},
		{"local file on an s3 table", s3, "file:///wh/T/f.parquet", "/wh/T/f.parquet", false},
		{"bucket root table", Root{Bucket: "lake"}, "s3://lake/f.parquet", "f.parquet", true},
		{"filesystem root table", Root{Dir: "/"}, "file:///f.parquet", "f.parquet", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, inside, err := c.root.Canonical(c.raw)
			require.NoError(t, err)
			assert.Equal(t, c.want, got)
			assert.Equal(t, c.inside, inside)
			if inside {
				again, in2, err := c.root.Canonical(c.root.URI(got))
				require.NoError(t, err)
				assert.Equal(t, got, again, "the absolute URI of a canonical path is the same file")
				assert.True(t, in2)
				again, _, err = c.root.Canonical(EncodePath(got))
				require.NoError(t, err)
				assert.Equal(t, got, again, "the encoded canonical path is the same file")
			}
		})
	}
	for _, raw := range []string{"", ".", "%", "f%zz.parquet", "file://host/data/T/f.parquet", "file:f.parquet",
		"file%3A%2Fetc%2Fpasswd", "file:///data/T", "s3:///k"} {
		_, _, err := local.Canonical(raw)
		assert.ErrorIs(t, err, errPath, "%q", raw)
	}
}

// absoluteForms are the ways a log may name a file inside the table at
// root, given its table-relative path as the log encodes it.
var absoluteForms = map[string]func(root, rel string) string{
	"file:///":  func(root, rel string) string { return "file://" + EncodePath(root) + "/" + rel },
	"file:/":    func(root, rel string) string { return "file:" + EncodePath(root) + "/" + rel },
	"localhost": func(root, rel string) string { return "file://localhost" + EncodePath(root) + "/" + rel },
	"absolute":  func(root, rel string) string { return EncodePath(root) + "/" + rel },
}

// ageTree sets the modification time of every file under dir to age ago.
func ageTree(t *testing.T, dir string, age time.Duration) {
	t.Helper()
	old := time.Now().Add(-age)
	require.NoError(t, filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(p, old, old)
	}))
}

// TestVacuumKeepsLiveFilesNamedByAbsoluteURIs: a table whose log names its
// live files by absolute URIs (local, percent-encoded names included)
// keeps every one of them through a vacuum, while an old orphan goes; a
// file the log removed under another form of its path is not live.
func TestVacuumKeepsLiveFilesNamedByAbsoluteURIs(t *testing.T) {
	for form, uri := range absoluteForms {
		t.Run(form, func(t *testing.T) {
			tbl := newTestTable(t, "none", nil)
			root := tbl.Store.(*LocalStorage).Root
			s := snap(t, tbl)
			odd := writeNamedFile(t, tbl, s, 1, "part=1/odd name%41+é.parquet", 0, 10)
			plain := writeFile(t, tbl, s, 1, 10, 20)
			gone := writeFile(t, tbl, s, 1, 20, 30)
			for _, a := range []*Add{odd, plain, gone} {
				a.Path = uri(filepath.ToSlash(root), a.Path)
			}
			appendFiles(t, tbl, odd, plain, gone)
			s = snap(t, tbl)
			removedAt := time.Now().Add(-30 * 24 * time.Hour).UnixMilli()
			require.NoError(t, Commit(t.Context(), tbl, s.Version+1, []Action{
				{Remove: &Remove{Path: "part=1/f-20-30.parquet", DeletionTimestamp: &removedAt, DataChange: true}}}))
			// A file named as "odd name%41" would be if decoded twice.
			require.NoError(t, os.WriteFile(filepath.Join(root, "part=1", "odd nameA+é.parquet"), []byte("x"), 0o644))
			ageTree(t, root, 30*24*time.Hour)
			plan, err := tbl.PlanVacuum(t.Context(), VacuumConfig{Retain: TableRetention})
			require.NoError(t, err)
			var names []string
			for _, f := range plan.Files {
				names = append(names, f.Path)
			}
			require.ElementsMatch(t, []string{"part=1/f-20-30.parquet", "part=1/odd nameA+é.parquet"}, names,
				"the live files stay; the removed one and the orphan go")
			want := sorted(idRange(1, 0, 20))
			require.Equal(t, want, ids(t, tbl), "the remove of the relative path ends the absolute add")
			_, err = plan.Execute(t.Context(), tbl)
			require.NoError(t, err)
			assert.FileExists(t, filepath.Join(root, "part=1", "odd name%41+é.parquet"))
			assert.FileExists(t, filepath.Join(root, "part=1", "f-10-20.parquet"))
			assert.Equal(t, want, ids(t, tbl), "the table reads the same after vacuum")
		})
	}
}

// TestVacuumNeverDeletesOutsideTheTable: files the log names outside the
// table (another directory, an absolute path through "..", a relative
// "../" or "%2e%2e%2f") are read when live and never deleted, even when
// removed long ago and vacuumed with no retention.
func TestVacuumNeverDeletesOutsideTheTable(t *testing.T) {
	tbl := newTestTable(t, "none", nil)
	root := filepath.ToSlash(tbl.Store.(*LocalStorage).Root)
	other := filepath.ToSlash(t.TempDir())
	s := snap(t, tbl)
	moveOut := func(a *Add, name string) string {
		dst := path.Join(other, name)
		require.NoError(t, os.Rename(filepath.Join(filepath.FromSlash(root), filepath.FromSlash(a.Path)), filepath.FromSlash(dst)))
		return dst
	}
	live := writeFile(t, tbl, s, 1, 0, 10)
	liveOut := moveOut(live, "live.parquet")
	live.Path = "file://" + EncodePath(liveOut)
	appendFiles(t, tbl, live)

	var removed []Action
	var outside []string
	old := time.Now().Add(-30 * 24 * time.Hour).UnixMilli()
	for i, form := range []func(p string) string{
		func(p string) string { return "file://" + EncodePath(p) },
		func(p string) string {
			return "file://" + EncodePath(root) + "/../" + path.Base(other) + "/" + path.Base(p)
		},
		func(p string) string { return EncodePath(p) },
	} {
		a := writeFile(t, tbl, s, 2, int64(100+10*i), int64(110+10*i))
		p := moveOut(a, path.Base(a.Path))
		outside = append(outside, p)
		removed = append(removed, Action{Remove: &Remove{Path: form(p), DeletionTimestamp: &old, DataChange: true}})
	}
	escape := []string{"../" + path.Base(other) + "/escape.parquet", "%2e%2e%2f" + path.Base(other) + "%2fescape.parquet"}
	require.NoError(t, os.WriteFile(filepath.Join(filepath.FromSlash(other), "escape.parquet"), []byte("x"), 0o644))
	for _, p := range escape {
		removed = append(removed, Action{Remove: &Remove{Path: p, DeletionTimestamp: &old, DataChange: true}})
	}
	s = snap(t, tbl)
	require.NoError(t, Commit(t.Context(), tbl, s.Version+1, removed))
	ageTree(t, filepath.FromSlash(root), 30*24*time.Hour)
	ageTree(t, filepath.FromSlash(other), 30*24*time.Hour)

	plan, err := tbl.PlanVacuum(t.Context(), VacuumConfig{Retain: 0, Force: true})
	require.NoError(t, err)
	_, err = plan.Execute(t.Context(), tbl)
	require.NoError(t, err)
	for _, p := range append(outside, liveOut, path.Join(other, "escape.parquet")) {
		assert.FileExists(t, filepath.FromSlash(p))
	}
	assert.Equal(t, sorted(idRange(1, 0, 10)), ids(t, tbl), "the live file outside the table is read")
}

// TestRewriteConflictsAcrossPathForms: a concurrent commit that removes a
// file the rewrite replaces conflicts whichever form of the path either
// side uses.
func TestRewriteConflictsAcrossPathForms(t *testing.T) {
	for _, absoluteInRewrite := range []bool{false, true} {
		name := "concurrent absolute"
		if absoluteInRewrite {
			name = "rewrite absolute"
		}
		t.Run(name, func(t *testing.T) {
			tbl := newTestTable(t, "none", nil)
			s := snap(t, tbl)
			a := writeFile(t, tbl, s, 1, 0, 10)
			rel := a.Path
			abs := tbl.Store.TableRoot().URI(rel)
			ours, theirs := rel, abs
			if absoluteInRewrite {
				ours, theirs = abs, rel
			}
			a.Path = ours
			appendFiles(t, tbl, a)
			s = snap(t, tbl)
			require.NoError(t, Commit(t.Context(), tbl, s.Version+1, []Action{{Remove: &Remove{Path: theirs, DataChange: true}}}))
			err := checkRewriteConflicts(t.Context(), tbl, s.Version, s.Version+1, []*Remove{{Path: ours}})
			var ce *ConflictError
			require.True(t, errors.As(err, &ce), "want a conflict, got %v", err)
			assert.Equal(t, "part=1/f-0-10.parquet", ce.Path)
			assert.True(t, strings.Contains(ce.Reason, "removed"), ce.Reason)
		})
	}
}

// TestVacuumKeepsLiveFilesThroughSymlinks: a table whose log names its
// directory through a symbolic link keeps its live files through a vacuum
// of the real directory. (A table opened through a link to its directory
// lists nothing under it today, so that direction deletes nothing.)
func TestVacuumKeepsLiveFilesThroughSymlinks(t *testing.T) {
	realDir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	link := filepath.Join(t.TempDir(), "link")
	require.NoError(t, os.Symlink(realDir, link))
	tbl, err := OpenLocal(realDir)
	require.NoError(t, err)
	createTestTable(t, tbl, "none", nil)
	s := snap(t, tbl)
	a := writeFile(t, tbl, s, 1, 0, 10)
	a.Path = "file://" + EncodePath(filepath.ToSlash(link)) + "/" + a.Path
	appendFiles(t, tbl, a)
	ageTree(t, realDir, 30*24*time.Hour)

	plan, err := tbl.PlanVacuum(t.Context(), VacuumConfig{Retain: 0, Force: true})
	require.NoError(t, err)
	assert.Empty(t, plan.Files, "the live file is kept")
	assert.Equal(t, sorted(idRange(1, 0, 10)), ids(t, tbl))
}

// TestEncodePathEscapesColon: an add path is a relative reference that
// java.net.URI reads without a scheme, and it decodes back to the name.
func TestEncodePathEscapesColon(t *testing.T) {
	for _, name := range []string{"ts=2026-06-01%2000:30:00/part-0.parquet", "a:b/c:d.parquet", "x/y.parquet"} {
		enc := EncodePath(name)
		assert.NotContains(t, enc, ":")
		u, err := url.Parse(enc)
		require.NoError(t, err)
		assert.Empty(t, u.Scheme)
		dec, err := url.PathUnescape(enc)
		require.NoError(t, err)
		assert.Equal(t, name, dec)
	}
}
