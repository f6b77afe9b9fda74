// Package scratch makes a process's private local directories: each is
// locked while its process lives, so that a directory left by a killed
// process is found and removed by the next process that opens one of
// the same kind under the same root. Spilled sorts keep their runs in
// them, and uploads to object stores stage their objects in them.
package scratch

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Dir is one private directory. While its process lives it holds an
// exclusive lock on the directory's lock file; the lock dies with the
// process, so a directory whose lock can be taken belongs to a process
// that was killed.
type Dir struct {
	path string
	lock *os.File
}

// Open creates a fresh directory under root, named prefix, the process's
// id and a random suffix, after removing the directories of the same
// prefix that killed processes left there (their paths are returned).
// root must exist.
func Open(root, prefix string) (*Dir, []string, error) {
	removed := Sweep(root, prefix)
	path, err := os.MkdirTemp(root, prefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return nil, removed, err
	}
	lock, err := takeLock(path)
	if err != nil {
		os.RemoveAll(path)
		return nil, removed, fmt.Errorf("lock %s: %w", path, err)
	}
	return &Dir{path: path, lock: lock}, removed, nil
}

// takeLock creates the directory's lock file already locked: it is
// written and locked under a temporary name and only then renamed to
// "lock", so a concurrent Sweep never finds a lock file that is free
// only because its process has not locked it yet.
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

// Sweep removes the directories under root named with prefix that no
// live process holds (theirs was killed) and returns their paths. A
// directory a live process holds is never touched.
func Sweep(root, prefix string) []string {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil
	}
	var removed []string
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		dir := filepath.Join(root, e.Name())
		if removeAbandoned(dir, e) {
			removed = append(removed, dir)
		}
	}
	return removed
}

// removeAbandoned removes one directory if no live process holds it,
// keeping the dead process's lock while it removes, so that two sweeps
// never race on the same directory.
func removeAbandoned(dir string, e os.DirEntry) bool {
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR, 0)
	if err != nil {
		// No lock file: a process killed before it locked its
		// directory, unless it is brand new and still taking its lock.
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
