package scriptcheck_test

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	// exitTrap is a trap on EXIT, at any indentation.
	exitTrap = regexp.MustCompile(`^\s*trap\s.*\bEXIT\b`)
	// execCommand is an exec that runs a command, replacing the shell: not
	// one that only opens or moves descriptors (exec 3<>file, exec >log).
	execCommand = regexp.MustCompile(`^\s*exec\s+[^\s0-9<>&]`)
)

// TestNoExecAfterExitTrap fails for each script that sets an EXIT trap and
// later replaces itself with exec: the trap never runs, so what it was to
// remove (a built binary, a warehouse) stays behind on every run.
func TestNoExecAfterExitTrap(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("../../..")
	require.NoError(t, err)
	scripts := []string{filepath.Join(root, ".ci", "run")}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(d.Name(), ".sh") {
			scripts = append(scripts, p)
		}
		return nil
	})
	require.NoError(t, err)
	assert.Greater(t, len(scripts), 10, "the walk found the module's scripts")
	for _, p := range scripts {
		for _, line := range execsAfterTrap(t, p) {
			rel, _ := filepath.Rel(root, p)
			t.Errorf("%s:%d: exec after an EXIT trap: the trap never runs; run the command and let the script exit with its status", rel, line)
		}
	}
}

// TestExecAfterExitTrapIsFound feeds the check a script with the defect
// and one without it.
func TestExecAfterExitTrapIsFound(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.sh")
	require.NoError(t, os.WriteFile(bad, []byte("#!/bin/bash\ntmp=\"$(mktemp -d)\"\ntrap 'rm -rf \"$tmp\"' EXIT\nexec python3 run.py \"$@\"\n"), 0o755))
	assert.Equal(t, []int{4}, execsAfterTrap(t, bad))
	good := filepath.Join(dir, "good.sh")
	require.NoError(t, os.WriteFile(good, []byte("#!/bin/bash\nexec 3<>/dev/null\nexec >log 2>&1\ntrap 'rm -rf \"$tmp\"' EXIT\nexec 4>&1\npython3 run.py \"$@\"\n(cd x && exec ./prism)\n"), 0o755))
	assert.Empty(t, execsAfterTrap(t, good))
}

// execsAfterTrap returns the lines of the script at p that exec a command
// after an EXIT trap is set.
func execsAfterTrap(t *testing.T, p string) []int {
	t.Helper()
	f, err := os.Open(p)
	require.NoError(t, err)
	defer f.Close()
	var found []int
	trapped := false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case exitTrap.MatchString(line):
			trapped = true
		case trapped && execCommand.MatchString(line):
			found = append(found, n)
		}
	}
	require.NoError(t, sc.Err())
	return found
}
