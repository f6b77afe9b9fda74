package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/bench"
)

// spillFiles lists the spill segments under root and the run directories
// that hold them.
func spillFiles(t *testing.T, root string) (segments int, dirs []string) {
	t.Helper()
	entries, err := os.ReadDir(root)
	require.NoError(t, err)
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dirs = append(dirs, e.Name())
		files, _ := os.ReadDir(filepath.Join(root, e.Name()))
		for _, f := range files {
			if strings.HasSuffix(f.Name(), ".arrows") {
				segments++
			}
		}
	}
	return segments, dirs
}

// TestSpilledRewriteSurvivesSIGKILL kills a spilled Hilbert rewrite while
// it writes sorted runs into spill files, and again while it merges them
// (spill files are being consumed). Each time the table must be unchanged
// and the killed run's spill directory left behind; the next run must
// remove it and succeed.
func TestSpilledRewriteSurvivesSIGKILL(t *testing.T) {
	dir := t.TempDir()
	wh, spill := filepath.Join(dir, "wh"), filepath.Join(dir, "spill")
	require.NoError(t, os.Mkdir(spill, 0o755))
	const name = "crash.spill"
	_, err := bench.Generate(t.Context(), openWarehouse(t, wh), bench.GenerateConfig{Table: name, Rows: 200000, Commits: 40, Seed: 5, Distribution: bench.Clustered})
	require.NoError(t, err)
	tbl := loadTable(t, openWarehouse(t, wh), name)
	want, snap := digest(t, tbl), tbl.CurrentSnapshot().SnapshotID
	args := []string{"--warehouse", wh, "rewrite", "--table", name, "--curve", "hilbert",
		"--option", "max-group-memory-bytes=1048576", "--option", "spill-dir=" + spill,
		"--option", "target-file-size-bytes=262144", "--option", "rewrite-all=true"}

	// kill starts a rewrite and SIGKILLs it once ready says so.
	kill := func(phase string, ready func(segments, most int) bool) {
		cmd := childCLI(t.Context(), args...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		require.NoError(t, cmd.Start())
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		most, killed := 0, false
		for !killed {
			select {
			case <-exited:
				t.Fatalf("the rewrite ended before its %s phase was killed: %s", phase, stderr.String())
			case <-time.After(time.Millisecond):
			}
			segments, _ := spillFiles(t, spill)
			most = max(most, segments)
			if ready(segments, most) {
				require.NoError(t, cmd.Process.Kill())
				killed = true
			}
		}
		<-exited
		tbl := loadTable(t, openWarehouse(t, wh), name)
		assert.Equal(t, snap, tbl.CurrentSnapshot().SnapshotID, "killed during %s: nothing may be committed", phase)
		checkIntact(t, tbl, want)
		segments, dirs := spillFiles(t, spill)
		assert.Len(t, dirs, 1, "killed during %s: the run's spill directory is left", phase)
		assert.Positive(t, segments)
	}
	kill("runs", func(segments, _ int) bool { return segments > 0 })
	// The first kill's directory is removed by the second run, which is
	// killed once it has consumed some of its own spill files.
	kill("merge", func(segments, most int) bool { return most > 4 && segments > 0 && segments < most-2 })

	res := runChild(t, args...)
	require.Equal(t, 0, res.Code, res.Stderr)
	tbl = loadTable(t, openWarehouse(t, wh), name)
	assert.Equal(t, table.OpReplace, tbl.CurrentSnapshot().Summary.Operation)
	checkIntact(t, tbl, want)
	segments, dirs := spillFiles(t, spill)
	assert.Zero(t, segments)
	assert.Empty(t, dirs, "the rerun removed the abandoned spill directory and its own")
}
