package spill_test

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/engine/spill"
)

// TestCleanAbandoned checks that only spill directories no live run
// holds are removed: a killed run's (its lock file free) goes; a live
// run's and anything not named like a spill directory stay.
func TestCleanAbandoned(t *testing.T) {
	root := t.TempDir()
	live, closeLive, err := openDir(t, root)
	require.NoError(t, err)
	defer closeLive()

	killed := filepath.Join(root, "geocompact-spill-999-1")
	require.NoError(t, os.MkdirAll(killed, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(killed, "lock"), []byte("pid 999\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(killed, "b00000-000000.arrows"), []byte("x"), 0o600))
	other := filepath.Join(root, "someone-elses")
	require.NoError(t, os.Mkdir(other, 0o755))

	removed := spill.CleanAbandoned(root)
	assert.Equal(t, []string{killed}, removed)
	assert.NoDirExists(t, killed)
	assert.DirExists(t, live, "a live run's directory is never touched")
	assert.DirExists(t, other)

	require.NoError(t, closeLive())
	assert.NoDirExists(t, live)
}

// openDir opens a run's spill directory under root and returns its path
// and a function that closes (removes) it.
func openDir(t *testing.T, root string) (string, func() error, error) {
	t.Helper()
	d, _, err := spill.OpenDir(root)
	if err != nil {
		return "", nil, err
	}
	return d.Path(), d.Close, nil
}

// TestCleanAbandonedSparesRunsBeingOpened races runs opening their spill
// directories against runs cleaning the same root: a directory whose run
// is alive must never be removed, even while its lock is being taken.
func TestCleanAbandonedSparesRunsBeingOpened(t *testing.T) {
	root := t.TempDir()
	const opens = 200
	done := make(chan struct{})
	var cleaners sync.WaitGroup
	for range 2 {
		cleaners.Add(1)
		go func() {
			defer cleaners.Done()
			for {
				select {
				case <-done:
					return
				default:
					spill.CleanAbandoned(root)
				}
			}
		}()
	}
	var lost []string
	for range opens {
		d, _, err := spill.OpenDir(root)
		require.NoError(t, err)
		if _, err := os.Stat(filepath.Join(d.Path(), "lock")); err != nil {
			lost = append(lost, d.Path())
		}
		require.NoError(t, d.Close())
	}
	close(done)
	cleaners.Wait()
	assert.Empty(t, lost, "live runs' spill directories removed by a concurrent clean")
}
