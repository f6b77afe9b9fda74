package delta

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// ErrExist reports that PutIfAbsent found the object already present.
var ErrExist = errors.New("delta: object already exists")

// FileInfo describes one stored object. Path is slash-separated and relative
// to the table root.
type FileInfo struct {
	Path    string
	Size    int64
	ModTime time.Time
	// Link is set for a symbolic link (local storage only), to one of
	// linkFile, LinkDirectory, linkDangling or linkOther; Size and ModTime
	// are then the link's own. A listing never follows a link.
	Link string
}

// Kinds of symbolic link, as FileInfo.Link.
const (
	linkFile      = "link-to-file"
	LinkDirectory = "link-to-directory"
	linkDangling  = "dangling-link"
	linkOther     = "link-to-special-file"
)

// linkKind returns what the local path p is a symbolic link to ("" when it
// is not a link).
func linkKind(p string, mode fs.FileMode) string {
	if mode&fs.ModeSymlink == 0 {
		return ""
	}
	st, err := os.Stat(p)
	switch {
	case err != nil:
		return linkDangling
	case st.IsDir():
		return LinkDirectory
	case st.Mode().IsRegular():
		return linkFile
	}
	return linkOther
}

// File is an open object: random access for Parquet footers and row groups,
// sequential reads for JSON.
type File interface {
	io.ReaderAt
	io.ReadSeeker
	io.Closer
}

// Storage is the table's file system, rooted at the table location. Paths are
// slash-separated and relative to the root; an absolute path or file: URL
// (as Delta allows in add actions and 'p' deletion vectors) is used as is.
//
// It is kept small so that an object store fits: List is a prefix listing,
// PutIfAbsent is a conditional create. On S3 that is PutObject with
// If-None-Match: * (supported since 2024); stores without a conditional create
// need an external lock and must not be used for concurrent writers.
type Storage interface {
	// List returns the objects under dir, recursively when recursive is set,
	// sorted by path. A missing dir lists as empty.
	List(ctx context.Context, dir string, recursive bool) ([]FileInfo, error)
	// Open opens an object for reading; a missing one wraps fs.ErrNotExist.
	Open(ctx context.Context, name string) (File, error)
	// PutIfAbsent creates an object atomically; it wraps ErrExist when the
	// object is already there and then writes nothing.
	PutIfAbsent(ctx context.Context, name string, data []byte) error
	// Put creates or replaces an object (atomically on the local file system).
	Put(ctx context.Context, name string, data []byte) error
	// Create streams a new object; it appears under name only when Close
	// returns nil, so a killed writer leaves no partial file behind it.
	Create(ctx context.Context, name string) (io.WriteCloser, error)
	// Delete removes an object; a missing one is not an error.
	Delete(ctx context.Context, name string) error
	// TableRoot is the table's location, which Root.Canonical resolves
	// the log's paths against.
	TableRoot() Root
}

// LocalStorage is Storage on the local file system under Root.
type LocalStorage struct {
	Root string
}

var _ Storage = (*LocalStorage)(nil)

// newLocalStorage returns a LocalStorage for the table directory root, which
// may be a plain path or a file: URL.
func newLocalStorage(root string) (*LocalStorage, error) {
	p, err := localPath(root)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return nil, fmt.Errorf("resolve table location %q: %w", root, err)
	}
	return &LocalStorage{Root: abs}, nil
}

// TableRoot implements Storage.
func (s *LocalStorage) TableRoot() Root { return Root{Dir: path.Clean(filepath.ToSlash(s.Root))} }

func localPath(p string) (string, error) {
	if !strings.HasPrefix(p, "file:") {
		return p, nil
	}
	u, err := url.Parse(p)
	if err != nil {
		return "", fmt.Errorf("parse location %q: %w", p, err)
	}
	return u.Path, nil
}

func (s *LocalStorage) full(name string) (string, error) {
	p, err := localPath(name)
	if err != nil {
		return "", err
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p), nil
	}
	clean := path.Clean("/" + p)
	return filepath.Join(s.Root, filepath.FromSlash(clean)), nil
}

// List implements Storage.
func (s *LocalStorage) List(ctx context.Context, dir string, recursive bool) ([]FileInfo, error) {
	base, err := s.full(dir)
	if err != nil {
		return nil, err
	}
	var out []FileInfo
	// The trailing separator makes the walk enter a base that is itself a
	// symbolic link (a table directory linked in place); links below it
	// are listed as links, never followed.
	walkRoot := strings.TrimSuffix(base, string(filepath.Separator)) + string(filepath.Separator)
	err = filepath.WalkDir(walkRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == walkRoot {
				return fs.SkipAll
			}
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed while listing (another writer's temporary file)
			}
			return err
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		if d.IsDir() {
			if p != walkRoot && !recursive {
				return fs.SkipDir
			}
			return nil
		}
		info, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil // removed between reading the directory and the stat
		}
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(s.Root, p)
		if err != nil {
			return err
		}
		out = append(out, FileInfo{Path: filepath.ToSlash(rel), Size: info.Size(), ModTime: info.ModTime(), Link: linkKind(p, info.Mode())})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	return out, nil
}

// Open implements Storage.
func (s *LocalStorage) Open(_ context.Context, name string) (File, error) {
	p, err := s.full(name)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", name, err)
	}
	return f, nil
}

// PutIfAbsent implements Storage: the data goes to a temporary file that is
// then hard-linked to the target, so the target appears complete or not at
// all, and link fails when the target exists.
func (s *LocalStorage) PutIfAbsent(_ context.Context, name string, data []byte) error {
	return s.put(name, data, func(tmp, target string) error {
		err := os.Link(tmp, target)
		os.Remove(tmp)
		if errors.Is(err, fs.ErrExist) {
			return ErrExist
		}
		return err
	})
}

// Put implements Storage with a write to a temporary file and a rename.
func (s *LocalStorage) Put(_ context.Context, name string, data []byte) error {
	return s.put(name, data, func(tmp, target string) error {
		err := os.Rename(tmp, target)
		if err != nil {
			os.Remove(tmp)
		}
		return err
	})
}

// put writes data to a synced temporary file beside name and publishes it.
func (s *LocalStorage) put(name string, data []byte, publish func(tmp, target string) error) error {
	p, err := s.full(name)
	if err != nil {
		return err
	}
	tmp, err := writeTemp(p, data)
	if err == nil {
		err = publish(tmp, p)
	}
	if err != nil {
		return fmt.Errorf("put %s: %w", name, err)
	}
	return nil
}

// Create implements Storage with a temporary file renamed on Close.
func (s *LocalStorage) Create(_ context.Context, name string) (io.WriteCloser, error) {
	p, err := s.full(name)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", name, err)
	}
	f, err := os.CreateTemp(filepath.Dir(p), "."+filepath.Base(p)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", name, err)
	}
	return &renameOnClose{File: f, target: p}, nil
}

type renameOnClose struct {
	*os.File
	target string
}

func (w *renameOnClose) Close() error {
	err := w.File.Sync()
	if cerr := w.File.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(w.File.Name(), w.target)
	}
	if err != nil {
		os.Remove(w.File.Name())
		return fmt.Errorf("create %s: %w", w.target, err)
	}
	return nil
}

func writeTemp(target string, data []byte) (string, error) {
	dir := filepath.Dir(target)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(target)+".tmp-*")
	if err != nil {
		return "", err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(f.Name())
		return "", err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(f.Name())
		return "", err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// Delete implements Storage.
func (s *LocalStorage) Delete(_ context.Context, name string) error {
	p, err := s.full(name)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete %s: %w", name, err)
	}
	return nil
}

func readAll(ctx context.Context, st Storage, name string) ([]byte, error) {
	f, err := st.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return b, nil
}
