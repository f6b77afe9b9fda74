// Package spill holds what a sort larger than its memory budget keeps on
// local disk: a run's private spill directory (locked while the run
// lives, so the directories of killed runs can be found and removed), the
// buckets of a range-partitioned sort as LZ4 Arrow IPC segment files, and
// the default memory budget that decides when a sort spills. It knows
// nothing of tables: the engine decides what to spill and when.
package spill

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// EnvDir names the environment variable that sets the spill
// directory when the spill-dir option is not given.
const EnvDir = "GEOCOMPACT_SPILL_DIR"

// ErrDir marks a spilled sort that could not use its spill directory:
// missing, not writable, or too small. Nothing is committed.
var ErrDir = errors.New("spill")

// spillPrefix starts the name of every run's spill directory, so that a
// later run (or orphans) can recognise abandoned ones.
const spillPrefix = "geocompact-spill-"

// Root returns where spill directories go: opt (the spill-dir option),
// else $GEOCOMPACT_SPILL_DIR, else the OS temp directory. Spills are
// always local, whatever the warehouse.
func Root(opt string) string {
	if opt != "" {
		return opt
	}
	if env := os.Getenv(EnvDir); env != "" {
		return env
	}
	return os.TempDir()
}

// Dir is one run's private directory of spill files. While the run lives
// it holds an exclusive lock on the directory's lock file; the lock dies
// with the process, so a directory whose lock can be taken belongs to a
// run that was killed.
type Dir struct {
	path string
	lock *os.File
}

// OpenDir creates a fresh spill directory under root, after removing the
// directories that killed runs left there (their paths are returned).
func OpenDir(root string) (*Dir, []string, error) {
	st, err := os.Stat(root)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: spill directory %s: %w; set the spill-dir option or %s to an existing local directory", ErrDir, root, err, EnvDir)
	}
	if !st.IsDir() {
		return nil, nil, fmt.Errorf("%w: spill directory %s is not a directory; set the spill-dir option or %s to a local directory", ErrDir, root, EnvDir)
	}
	removed := CleanAbandoned(root)
	path, err := os.MkdirTemp(root, spillPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return nil, removed, fmt.Errorf("%w: cannot write in spill directory %s: %w; set the spill-dir option or %s to a writable local directory", ErrDir, root, err, EnvDir)
	}
	lock, err := takeLock(path)
	if err != nil {
		os.RemoveAll(path)
		return nil, removed, fmt.Errorf("%w: lock spill directory %s: %w", ErrDir, path, err)
	}
	return &Dir{path: path, lock: lock}, removed, nil
}

// takeLock creates the directory's lock file already locked: it is
// written and locked under a temporary name and only then renamed to
// "lock", so a concurrent CleanAbandoned never finds a lock file that is
// free only because its run has not locked it yet.
func takeLock(dir string) (*os.File, error) {
	tmp := filepath.Join(dir, "lock.new")
	lock, err := os.Create(tmp)
	if err != nil {
		return nil, err
	}
	if err := lockFile(lock); err != nil {
		lock.Close()
		return nil, err
	}
	fmt.Fprintf(lock, "pid %d\nstarted %s\n", os.Getpid(), time.Now().UTC().Format(time.RFC3339))
	if err := os.Rename(tmp, filepath.Join(dir, "lock")); err != nil {
		lock.Close()
		return nil, err
	}
	return lock, nil
}

// Path is the directory's path.
func (d *Dir) Path() string { return d.path }

// Close removes the directory and everything in it.
func (d *Dir) Close() error {
	err := os.RemoveAll(d.path)
	d.lock.Close()
	return err
}

// CleanAbandoned removes the spill directories under root that no
// live run holds (their run was killed) and returns their paths. A
// directory that a running rewrite holds is never touched.
func CleanAbandoned(root string) []string {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil
	}
	var removed []string
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), spillPrefix) {
			continue
		}
		dir := filepath.Join(root, e.Name())
		if removeAbandoned(dir, e) {
			removed = append(removed, dir)
		}
	}
	return removed
}

// removeAbandoned removes one spill directory if no live run holds it,
// keeping the dead run's lock while it removes, so that two cleaning
// runs never race on the same directory.
func removeAbandoned(dir string, e os.DirEntry) bool {
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR, 0)
	if err != nil {
		// No lock file: a run killed before it locked its directory,
		// unless it is brand new and still taking its lock.
		if info, serr := e.Info(); serr != nil || time.Since(info.ModTime()) < time.Minute {
			return false
		}
		return os.RemoveAll(dir) == nil
	}
	defer f.Close()
	if tryLockFile(f) != nil {
		return false
	}
	return os.RemoveAll(dir) == nil
}
