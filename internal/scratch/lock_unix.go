//go:build unix

package scratch

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive lock on f, held until f is closed or the
// process dies.
func lockFile(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) }

// tryLockFile takes the lock if no live process holds it.
func tryLockFile(f *os.File) error { return lockFile(f) }
