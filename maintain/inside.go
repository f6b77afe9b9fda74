package maintain

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/geocompact/geocompact/internal/localpath"
)

// tableRoot decides whether a file lies inside a table's location before
// expire or orphans deletes it. A path is compared as the file system
// would open it (localpath.Locate: a segment's escapes stay in its name,
// "%2e%2e" is a name, not ".."), and ".." segments
// are cleaned, so "t2/x" and "t/../u/x" are not inside "t". On the local
// file system the file's directory must also resolve, through any
// symbolic links, to a directory below the resolved location: a link in
// the table that leads out of it is not followed, while a location that
// is itself a link (or reached through one) works.
type tableRoot struct {
	loc string
	// local is the location as a local path; empty when it is not local.
	local string
	// resolved is local with its symbolic links resolved (local when it
	// cannot be resolved, as for a location not yet created).
	resolved string

	mu   sync.Mutex        // contains may be called from several goroutines
	dirs map[string]string // resolved directories, by local path
}

func newTableRoot(loc string) *tableRoot {
	r := &tableRoot{loc: loc, dirs: map[string]string{}}
	if p, ok := localFSPath(loc); ok {
		r.local = filepath.Clean(p)
		r.resolved = r.local
		if rp, err := filepath.EvalSymlinks(r.local); err == nil {
			r.resolved = rp
		}
	}
	return r
}

// contains reports whether p names a file strictly below the location.
func (r *tableRoot) contains(p string) bool {
	if r.local == "" {
		return underLocation(p, r.loc)
	}
	lp, ok := localFSPath(p)
	if !ok {
		return false
	}
	lp = filepath.Clean(lp)
	if !below(lp, r.local) {
		return false
	}
	rd := r.resolveDir(filepath.Dir(lp))
	return rd == r.resolved || below(rd, r.resolved)
}

// resolveDir returns the local directory dir with its symbolic links
// resolved: dir itself when it does not exist, "" when it cannot be
// resolved (not known to be inside anything).
func (r *tableRoot) resolveDir(dir string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if rd, ok := r.dirs[dir]; ok {
		return rd
	}
	rd := dir
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		rd = d
	} else if !errors.Is(err, fs.ErrNotExist) {
		rd = ""
	}
	r.dirs[dir] = rd
	return rd
}

// containsDir reports whether the directory p is the location or lies
// below it, lexically and, on the local file system, with links resolved.
func (r *tableRoot) containsDir(p string) bool {
	if r.local == "" {
		return underLocation(strings.TrimSuffix(p, "/")+"/_", r.loc)
	}
	lp, ok := localFSPath(p)
	if !ok {
		return false
	}
	lp = filepath.Clean(lp)
	if lp != r.local && !below(lp, r.local) {
		return false
	}
	rp, err := filepath.EvalSymlinks(lp)
	if errors.Is(err, fs.ErrNotExist) {
		rp, err = lp, nil
	}
	return err == nil && (rp == r.resolved || below(rp, r.resolved))
}

// below reports whether the clean local path p lies strictly below dir.
func below(p, dir string) bool {
	return strings.HasPrefix(p, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}

// KeptFile is a file expire or orphans would have deleted and kept, and
// why (one of the Keep* reasons).
type KeptFile struct {
	Path   string `json:"path"`
	Kind   string `json:"kind"`
	Bytes  int64  `json:"bytes"`
	Reason string `json:"reason"`
}

// Reasons a file is kept.
const (
	// KeepOutsideLocation is a file outside the table location.
	KeepOutsideLocation = "outside-location"
	// KeepLinkToDirectory is a symbolic link to a directory.
	KeepLinkToDirectory = "link-to-directory"
	// KeepDanglingLink is a symbolic link to nothing, or to something that
	// cannot be examined.
	KeepDanglingLink = "dangling-link"
	// KeepLinkToOther is a symbolic link to neither a file nor a directory.
	KeepLinkToOther = "link-to-special-file"
	// KeepDirectory is a directory.
	KeepDirectory = "directory"
)

// keep returns why the file at p must not be deleted ("" when it may
// be): it is outside the location (unless outsideOK), or keepReason says
// so.
func (r *tableRoot) keep(p string, outsideOK bool) string {
	if !outsideOK && !r.contains(p) {
		return KeepOutsideLocation
	}
	return r.keepReason(p)
}

// keepReason returns why the local file at p must not be removed: it is a
// directory, or a symbolic link to anything but a regular file. A link to
// a regular file may go (removing it removes the link, never its target);
// "" means p may be removed. Paths that are not local, or no longer exist,
// give "".
func (r *tableRoot) keepReason(p string) string {
	if r.local == "" {
		return ""
	}
	lp, ok := localFSPath(p)
	if !ok {
		return ""
	}
	st, err := os.Lstat(lp)
	if err != nil {
		return ""
	}
	switch {
	case st.IsDir():
		return KeepDirectory
	case st.Mode()&fs.ModeSymlink == 0:
		return ""
	}
	target, err := os.Stat(lp)
	switch {
	case err != nil:
		return KeepDanglingLink
	case target.IsDir():
		return KeepLinkToDirectory
	case !target.Mode().IsRegular():
		return KeepLinkToOther
	}
	return ""
}

// localFSPath returns the local path the table's file IO opens for name,
// and whether name is local at all: the same mapping (localpath.Locate),
// so that what is checked is what is deleted.
func localFSPath(name string) (string, bool) {
	return localpath.Locate(name)
}

// keptNote says, for a step's detail, how many files a removal kept and
// why ("" when none).
func keptNote(kept []KeptFile) string {
	if len(kept) == 0 {
		return ""
	}
	by := map[string]int{}
	for _, k := range kept {
		by[k.Reason]++
	}
	parts := make([]string, 0, len(by))
	for _, r := range slices.Sorted(maps.Keys(by)) {
		parts = append(parts, fmt.Sprintf("%d %s", by[r], r))
	}
	return fmt.Sprintf("; kept %d files (%s)", len(kept), strings.Join(parts, ", "))
}
