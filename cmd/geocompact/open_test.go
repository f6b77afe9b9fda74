package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMetadataCommandsSurviveABrokenManifest: the commands that read a
// table's metadata or change its properties do not plan its files, so a
// broken manifest stops neither them nor the command that would show it;
// the commands that read the files fail and name the planning.
func TestMetadataCommandsSurviveABrokenManifest(t *testing.T) {
	t.Parallel()
	wh := t.TempDir()
	generateForTest(t, wh, "--table", "demo.t", "--rows", "200", "--commits", "2", "--seed", "3")
	var broken int
	require.NoError(t, filepath.WalkDir(wh, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".avro") || strings.HasPrefix(d.Name(), "snap-") {
			return err
		}
		broken++
		return os.WriteFile(p, []byte("not avro"), 0o644)
	}))
	require.Positive(t, broken, "the table's manifests")

	for _, args := range [][]string{
		{"inspect", "snapshots", "--table", "demo.t"},
		{"inspect", "history", "--table", "demo.t"},
		{"inspect", "schema", "--table", "demo.t"},
		{"alter", "--table", "demo.t", "--set", "owner=gis"},
	} {
		r := runCLI(t, wh, false, args...)
		assert.Equal(t, exitOK, r.Code, "%v: stderr %s", args, r.Stderr)
	}
	for _, args := range [][]string{
		{"validate", "--table", "demo.t"},
		{"rewrite", "--table", "demo.t", "--dry-run"},
	} {
		r := runCLI(t, wh, false, args...)
		assert.Equal(t, exitError, r.Code, "%v: stdout %s", args, r.Stdout)
		assert.Contains(t, r.Stderr, "demo.t", "%v names the table", args)
	}
}
