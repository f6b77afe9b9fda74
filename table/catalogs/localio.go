package catalogs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/apache/iceberg-go/catalog"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/geocompact/geocompact/internal/faultio"
	"github.com/geocompact/geocompact/internal/localpath"
)

// iceberg-go writes every file of a local table (data files, manifests,
// manifest lists, metadata.json) through the FileIO its registry makes for
// file: locations, the catalog's metadata writes included, and makes it
// with the context of the operation. Open replaces that factory once with
// one whose FileIO is iceberg-go's own LocalFS, which also records the
// files created under a context from TrackFiles (so a failed operation
// can delete what it wrote, part-written files included) and, in tests,
// fails writes as a faultio.Fault in the context says.

// Files collects the paths of the files created under a context from
// TrackFiles.
type Files struct {
	mu     sync.Mutex
	paths  []string
	taken  bool   // a catalog took a commit under it
	parent *Files // an enclosing tracker, which sees the same files
}

type filesKey struct{}

// TrackFiles returns ctx carrying a new Files that records every local
// file created under it.
func TrackFiles(ctx context.Context) (context.Context, *Files) {
	parent, _ := ctx.Value(filesKey{}).(*Files)
	f := &Files{parent: parent}
	return context.WithValue(ctx, filesKey{}, f), f
}

// FailedWrite reports whether err is a local file that the tracked FileIO
// could not create or write (a full disk, an I/O error; a *WriteError),
// in a commit attempt that failed so before asking the catalog, or while
// the catalog wrote the new metadata file it had yet to publish. A
// failure whose outcome is unknown (OutcomeUnknown) is not one, whatever
// it wraps: a file error after the catalog took a commit does not undo
// it.
func FailedWrite(err error) bool {
	_, write := errors.AsType[*WriteError](err)
	return write && !OutcomeUnknown(err)
}

// RemoveOnFailedWrite runs attempt, a commit of the table ident of cat,
// with the local files it creates tracked, and deletes them all when the
// attempt surely committed nothing:
//   - it failed writing or reading a file (FailedWrite), or
//   - the catalog refused it, or it found the table changed before sending
//     it (IsRetryable: a lost compare-and-swap, iceberg-go's own replays
//     exhausted, a base another writer removed),
//
// and the table, loaded again, references none of them (as its metadata
// file, a previous one, a snapshot's manifest list or a manifest of a
// branch head). Any other failure leaves them: a commit whose outcome is
// unknown (a timeout after it was sent, a catalog's server error) may
// have been taken. Orphan cleanup finds them otherwise.
//
// The error it returns is marked OutcomeUnknown when the attempt failed
// after a catalog took a commit under it, when the reloaded table
// references one of its files, or when a failed write cannot be checked
// so (the table does not load): none of those surely left the table
// unchanged.
func RemoveOnFailedWrite(ctx context.Context, cat catalog.Catalog, ident table.Identifier, attempt func(ctx context.Context) error) error {
	return CommitTracked(ctx, cat, ident, func(ctx context.Context) (*table.Table, error) {
		return nil, attempt(ctx)
	})
}

// CommitTracked is RemoveOnFailedWrite for an attempt that returns the
// table it committed. When it succeeds, the metadata files, manifest
// lists and manifests it created that the committed table does not
// reference are deleted: iceberg-go replays a commit the catalog refused
// on the fresh head, writing them anew, and leaves the refused try's.
// Nothing but this commit knew those files, and it is done with them.
func CommitTracked(ctx context.Context, cat catalog.Catalog, ident table.Identifier, attempt func(ctx context.Context) (*table.Table, error)) error {
	tctx, files := TrackFiles(ctx)
	committed, err := attempt(tctx)
	if err != nil && files.Taken() {
		err = markUnknown(err)
	}
	paths := files.Paths()
	if len(paths) == 0 {
		return err
	}
	ctx = context.WithoutCancel(ctx)
	if err == nil {
		if committed != nil {
			removeUnreferenced(ctx, committed, paths)
		}
		return nil
	}
	if !NothingCommitted(err) {
		return err
	}
	refs, rerr := loadReferenced(ctx, cat, ident)
	switch {
	case rerr == nil && slices.ContainsFunc(paths, func(p string) bool { return refs[p] }):
		return markUnknown(err) // the catalog took it after all
	case rerr != nil && IsRetryable(err):
		return err // refused, but what it wrote cannot be checked
	case rerr != nil:
		return markUnknown(err)
	}
	for _, p := range paths {
		if rerr := (localFS{}).Remove(p); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			err = fmt.Errorf("%w (and could not delete %s: %v)", err, p, rerr)
		}
	}
	return err
}

// removeUnreferenced deletes the metadata files, manifest lists and
// manifests among paths that tbl does not reference. It deletes nothing
// when tbl's references cannot all be read. A file it cannot delete is
// left for orphan cleanup.
func removeUnreferenced(ctx context.Context, tbl *table.Table, paths []string) {
	refs, err := referenced(ctx, tbl)
	if err != nil {
		return
	}
	for _, p := range paths {
		name := path.Base(p)
		if !refs[p] && (strings.HasSuffix(name, ".avro") || strings.Contains(name, ".metadata.json")) {
			_ = (localFS{}).Remove(p)
		}
	}
}

// loadReferenced loads the table ident of cat and returns what
// referenced does.
func loadReferenced(ctx context.Context, cat catalog.Catalog, ident table.Identifier) (map[string]bool, error) {
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		return nil, err
	}
	return referenced(ctx, tbl)
}

// referenced returns the files tbl's metadata names as its metadata file,
// a previous one or a snapshot's manifest list, and the manifests of its
// branch and tag heads.
func referenced(ctx context.Context, tbl *table.Table) (map[string]bool, error) {
	refs := map[string]bool{tbl.MetadataLocation(): true}
	for e := range tbl.Metadata().PreviousFiles() {
		refs[e.MetadataFile] = true
	}
	for _, s := range tbl.Metadata().Snapshots() {
		refs[s.ManifestList] = true
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	for _, ref := range tbl.Metadata().Refs() {
		s := tbl.Metadata().SnapshotByID(ref.SnapshotID)
		if s == nil {
			continue
		}
		manifests, err := s.Manifests(fsys)
		if err != nil {
			return nil, err
		}
		for _, m := range manifests {
			refs[m.FilePath()] = true
		}
	}
	return refs, nil
}

// Paths returns the paths created so far.
func (f *Files) Paths() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.paths)
}

// Taken reports whether a catalog took a commit under f.
func (f *Files) Taken() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.taken
}

func (f *Files) setTaken() {
	for ; f != nil; f = f.parent {
		f.mu.Lock()
		f.taken = true
		f.mu.Unlock()
	}
}

func (f *Files) add(p string) {
	for ; f != nil; f = f.parent {
		f.mu.Lock()
		f.paths = append(f.paths, p)
		f.mu.Unlock()
	}
}

var registerLocal sync.Once

// useTrackedLocalIO installs localFS as iceberg-go's FileIO for file:
// and scheme-less locations.
func useTrackedLocalIO() {
	registerLocal.Do(func() {
		factory := func(ctx context.Context, _ *url.URL, _ map[string]string) (iceio.IO, error) {
			files, _ := ctx.Value(filesKey{}).(*Files)
			return localFS{files: files, fault: faultio.From(ctx)}, nil
		}
		for _, scheme := range []string{"file", ""} {
			iceio.Unregister(scheme)
			iceio.Register(scheme, factory)
		}
	})
}

// localFS is iceberg-go's LocalFS with geocompact's mapping of locations
// to local paths (localpath.Locate: a partition directory's escapes stay
// in its one name, as Iceberg Java writes it), recording the files it
// creates.
type localFS struct {
	iceio.LocalFS
	files *Files
	fault *faultio.Fault
}

// Create implements iceio.WriteFileIO; the file is recorded before it is
// written. Its failures to create and write the file are *WriteError.
func (l localFS) Create(name string) (iceio.FileWriter, error) {
	if err := l.fault.Create(name); err != nil {
		return nil, &WriteError{Path: name, Err: err}
	}
	p, err := locate(name)
	if err == nil {
		err = localpath.CheckNames(p)
	}
	if err != nil {
		return nil, &WriteError{Path: name, Err: err}
	}
	l.files.add(name)
	w, err := l.LocalFS.Create(p)
	if err != nil {
		return nil, &WriteError{Path: name, Err: err}
	}
	return fileWriter{name: name, WriteCloser: l.fault.Writer(name, w)}, nil
}

// locate is the local path of name (localpath.Locate); a location of
// another scheme is refused.
func locate(name string) (string, error) {
	p, ok := localpath.Locate(name)
	if !ok {
		return "", fmt.Errorf("%q is not a local file location", name)
	}
	return p, nil
}

// The other operations of iceio.LocalFS, on the local path of each name.

// at runs op on the local path of name.
func at[T any](name string, op func(string) (T, error)) (T, error) {
	p, err := locate(name)
	if err != nil {
		var zero T
		return zero, err
	}
	return op(p)
}

// at2 runs op on the local paths of oldpath and newpath.
func at2(oldpath, newpath string, op func(string, string) error) error {
	src, err := locate(oldpath)
	if err != nil {
		return err
	}
	dst, err := locate(newpath)
	if err != nil {
		return err
	}
	return op(src, dst)
}

// noValue adapts an operation that returns only an error to at.
func noValue(op func(string) error) func(string) (struct{}, error) {
	return func(p string) (struct{}, error) { return struct{}{}, op(p) }
}

func (l localFS) Open(name string) (iceio.File, error)       { return at(name, l.LocalFS.Open) }
func (l localFS) ReadFile(name string) ([]byte, error)       { return at(name, l.LocalFS.ReadFile) }
func (l localFS) ReadDir(name string) ([]fs.DirEntry, error) { return at(name, l.LocalFS.ReadDir) }
func (l localFS) Stat(name string) (fs.FileInfo, error)      { return at(name, l.LocalFS.Stat) }

// Remove implements iceio.IO. A name too long to exist does not exist
// (Create refused it).
func (l localFS) Remove(name string) error {
	_, err := at(name, noValue(func(p string) error {
		if err := localpath.CheckNames(p); err != nil {
			return &fs.PathError{Op: "remove", Path: p, Err: fs.ErrNotExist}
		}
		return l.LocalFS.Remove(p)
	}))
	return err
}

func (l localFS) RemoveAll(name string) error {
	_, err := at(name, noValue(l.LocalFS.RemoveAll))
	return err
}

func (l localFS) MkdirAll(name string) error {
	_, err := at(name, noValue(l.LocalFS.MkdirAll))
	return err
}

func (l localFS) Mkdir(name string) error {
	_, err := at(name, noValue(l.LocalFS.Mkdir))
	return err
}

func (l localFS) WalkDir(root string, fn fs.WalkDirFunc) error {
	_, err := at(root, noValue(func(p string) error { return l.LocalFS.WalkDir(p, fn) }))
	return err
}

func (l localFS) Rename(oldpath, newpath string) error {
	return at2(oldpath, newpath, l.LocalFS.Rename)
}

func (l localFS) RenameNoReplace(oldpath, newpath string) error {
	return at2(oldpath, newpath, l.LocalFS.RenameNoReplace)
}

// WriteFile implements iceio.WriteFileIO.
func (l localFS) WriteFile(name string, content []byte) error {
	w, err := l.Create(name)
	if err != nil {
		return err
	}
	if _, err := w.Write(content); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

// fileWriter is an io.WriteCloser as an iceio.FileWriter whose failures
// are *WriteError.
type fileWriter struct {
	io.WriteCloser
	name string
}

func (w fileWriter) Write(p []byte) (int, error) {
	n, err := w.WriteCloser.Write(p)
	return n, w.mark(err)
}

func (w fileWriter) Close() error { return w.mark(w.WriteCloser.Close()) }

func (w fileWriter) ReadFrom(r io.Reader) (int64, error) {
	return io.Copy(struct{ io.Writer }{w}, r)
}

func (w fileWriter) mark(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := errors.AsType[*WriteError](err); ok {
		return err
	}
	return &WriteError{Path: w.name, Err: err}
}
