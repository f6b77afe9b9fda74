package engine_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/engine"
)

// TestCleanAbandonedSpills checks that only spill directories no live run
// holds are removed: a killed run's (its lock file free) goes; a live
// run's and anything not named like a spill directory stay.
func TestCleanAbandonedSpills(t *testing.T) {
	root := t.TempDir()
	live, closeLive, err := engine.OpenSpillDir(root)
	require.NoError(t, err)
	defer closeLive()

	killed := filepath.Join(root, "geocompact-spill-999-1")
	require.NoError(t, os.MkdirAll(killed, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(killed, "lock"), []byte("pid 999\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(killed, "b00000-000000.arrows"), []byte("x"), 0o600))
	other := filepath.Join(root, "someone-elses")
	require.NoError(t, os.Mkdir(other, 0o755))

	removed := engine.CleanAbandonedSpills(root)
	assert.Equal(t, []string{killed}, removed)
	assert.NoDirExists(t, killed)
	assert.DirExists(t, live, "a live run's directory is never touched")
	assert.DirExists(t, other)

	require.NoError(t, closeLive())
	assert.NoDirExists(t, live)
}
