package deltatest

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/delta"
)

// AbsolutePaths rewrites every commit of the local table at dir so that
// its add and remove actions name their files by absolute file:// URIs
// inside the table, as shallow clones and some writers store them.
func AbsolutePaths(t testing.TB, dir string) {
	t.Helper()
	abs, err := filepath.Abs(dir)
	require.NoError(t, err)
	root := delta.Root{Dir: filepath.ToSlash(abs)}
	commits, err := filepath.Glob(filepath.Join(dir, delta.LogDir, "*.json"))
	require.NoError(t, err)
	for _, c := range commits {
		b, err := os.ReadFile(c)
		require.NoError(t, err)
		acts, err := delta.ParseActions(b)
		require.NoError(t, err)
		absolute := func(p *string) {
			rel, inside, err := root.Canonical(*p)
			require.NoError(t, err)
			if inside {
				*p = root.URI(rel)
			}
		}
		for _, a := range acts {
			switch {
			case a.Add != nil:
				absolute(&a.Add.Path)
			case a.Remove != nil:
				absolute(&a.Remove.Path)
			}
		}
		b, err = delta.EncodeActions(acts)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(c, b, 0o644))
	}
}

// Age sets the modification time of every file under dir to age ago, as
// if the table had been written then.
func Age(t testing.TB, dir string, age time.Duration) {
	t.Helper()
	old := time.Now().Add(-age)
	require.NoError(t, filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(p, old, old)
	}))
}
