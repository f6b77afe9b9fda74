//go:build !unix

package spill

import (
	"errors"
	"os"
)

// Without flock, a spill directory is never taken for abandoned: killed
// runs leave theirs for the user (or orphans) to remove.
func lockFile(*os.File) error    { return nil }
func tryLockFile(*os.File) error { return errors.New("no file locks on this platform") }

// FreeBytes is unknown here; the check before spilling is skipped.
func FreeBytes(string) (int64, error) { return -1, nil }

// openFileLimit is unknown here.
func openFileLimit() int { return 0 }
