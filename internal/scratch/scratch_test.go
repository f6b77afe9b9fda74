package scratch_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/internal/scratch"
)

// envChildRoot makes TestHolderChild open a directory under its value
// and wait to be killed.
const envChildRoot = "GEOCOMPACT_TEST_SCRATCH_ROOT"

// TestHolderChild is the process TestSweepRemovesOnlyKilledOfItsPrefix
// kills while it holds a directory.
func TestHolderChild(t *testing.T) {
	root := os.Getenv(envChildRoot)
	if root == "" {
		t.Skip("run by TestSweepRemovesOnlyKilledOfItsPrefix")
	}
	d, _, err := scratch.Open(root, "a-")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(d.Path(), "data"), []byte("x"), 0o600))
	os.Stdout.WriteString(d.Path() + "\n")
	select {}
}

// TestSweepRemovesOnlyKilledOfItsPrefix: a directory whose process was
// killed (SIGKILL, its lock released by the kernel) is removed by the
// next Open of its prefix and by nothing else: not by a sweep of another
// prefix, and a live process's directory of the same prefix stays.
func TestSweepRemovesOnlyKilledOfItsPrefix(t *testing.T) {
	root := t.TempDir()
	child := exec.Command(os.Args[0], "-test.run=^TestHolderChild$")
	child.Env = append(os.Environ(), envChildRoot+"="+root)
	out, err := child.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, child.Start())
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err, "the child did not open its directory")
	killed := line[:len(line)-1]
	require.DirExists(t, killed)

	live, _, err := scratch.Open(root, "a-")
	require.NoError(t, err)
	defer live.Close()
	assert.DirExists(t, killed, "a live process's directory is not swept")

	require.NoError(t, child.Process.Kill())
	_ = child.Wait()
	assert.Empty(t, scratch.Sweep(root, "b-"), "a sweep of another prefix removes nothing")
	assert.DirExists(t, killed)

	next, removed, err := scratch.Open(root, "a-")
	require.NoError(t, err)
	assert.Equal(t, []string{killed}, removed)
	assert.NoDirExists(t, killed, "the killed process's directory is removed")
	assert.DirExists(t, live.Path(), "this process's other directory is still held")
	require.NoError(t, next.Close())
	assert.NoDirExists(t, next.Path(), "Close removes the directory")
}
