//go:build unix

package spill

import "syscall"

// FreeBytes is the space available to this user on the file system of path.
func FreeBytes(path string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}

// openFileLimit is how many files the process may hold open (Go raises
// the soft limit to the hard one at start), or 0 when unknown.
func openFileLimit() int {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil || lim.Cur > 1<<30 {
		return 0
	}
	return int(lim.Cur)
}
