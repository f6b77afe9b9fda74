package main

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCPUProfile checks that GEOCOMPACT_CPUPROFILE's file holds a profile
// (gzip-compressed protocol buffers) once stopped, and that an empty path
// starts none.
func TestCPUProfile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.prof")
	stop := cpuProfile(path)
	stop()
	requireProfile(t, path)

	cpuProfile("")()
	other := filepath.Join(t.TempDir(), "other.prof")
	stop = cpuProfile(other)
	defer stop()
	_, err := os.Stat(other)
	require.NoError(t, err, "the profile stopped before can start again")
}

// requireProfile checks that the file at path holds a pprof profile:
// gzip-compressed protocol buffers, not empty.
func requireProfile(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err, "a profile is gzip-compressed")
	body, err := io.ReadAll(zr)
	require.NoError(t, err)
	assert.NotEmpty(t, body)
}
