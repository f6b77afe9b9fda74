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

	"github.com/geocompact/geocompact/internal/scratch"
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

// Dir is one run's private directory of spill files (see scratch.Dir):
// locked while the run lives, so the directories of killed runs can be
// found and removed.
type Dir = scratch.Dir

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
	d, removed, err := scratch.Open(root, spillPrefix)
	if err != nil {
		return nil, removed, fmt.Errorf("%w: cannot write in spill directory %s: %w; set the spill-dir option or %s to a writable local directory", ErrDir, root, err, EnvDir)
	}
	return d, removed, nil
}

// CleanAbandoned removes the spill directories under root that no
// live run holds (their run was killed) and returns their paths. A
// directory that a running rewrite holds is never touched.
func CleanAbandoned(root string) []string { return scratch.Sweep(root, spillPrefix) }
