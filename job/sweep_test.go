package job_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/internal/testing/icebergtest"
	"github.com/geocompact/geocompact/job"
)

// TestSweep sweeps the markers drivers left: a job whose driver died after
// its commit loses its failed attempts' files and its marker, never a
// file the commit references; a job that could still commit keeps all.
func TestSweep(t *testing.T) {
	t.Parallel()
	c := icebergtest.SQLite(t)
	cat, name := icebergtest.NewTable(t, c, bench.GenerateConfig{Rows: 8000, Commits: 6})
	dir := strings.TrimPrefix(icebergtest.Load(t, cat, name).Location(), "file://")
	cfg := engine.Request{Curve: "hilbert", Options: icebergtest.Opts("rewrite-all", "true", "target-file-size-bytes", "65536", "max-group-memory-bytes", "1048576")}

	// A job planned and marked, its driver gone before it committed: its
	// input files are live, so it could still commit.
	pending, err := job.Prepare(t.Context(), cat, name, cfg)
	require.NoError(t, err)
	require.NotEmpty(t, pending.Groups)
	require.NoError(t, pending.WriteMarker(t.Context()))
	files := icebergtest.DirFiles(t, dir)
	swept, err := job.Sweep(t.Context(), cat, name, "")
	require.NoError(t, err)
	assert.Empty(t, swept)
	assert.Equal(t, files, icebergtest.DirFiles(t, dir))

	// A job that committed, whose driver died before removing its marker,
	// with a failed attempt's file beside its committed ones.
	done, res, err := runJob(t, cat, name, cfg, false)
	require.NoError(t, err)
	require.True(t, res.Verified)
	require.NoError(t, done.WriteMarker(t.Context()))
	tbl := icebergtest.Load(t, cat, name)
	digest := icebergtest.Digest(t, tbl)
	var committed string
	for _, f := range icebergtest.DirFiles(t, dir) {
		if strings.Contains(filepath.Base(f), done.Tag()) {
			committed = f
			break
		}
	}
	require.NotEmpty(t, committed, "no file of the job")
	b, err := os.ReadFile(committed)
	require.NoError(t, err)
	attempt := filepath.Join(filepath.Dir(committed), "00000-0-"+done.Tag()+"-0000-000000000000-00001.parquet")
	require.NoError(t, os.WriteFile(attempt, b, 0o644))
	live := icebergtest.DirFiles(t, dir)

	swept, err = job.Sweep(t.Context(), cat, name, "")
	require.NoError(t, err)
	var bases []string
	for _, p := range swept {
		bases = append(bases, filepath.Base(p))
	}
	// Both markers go: the committed job's inputs were replaced by its own
	// commit, and the pending job planned the same files.
	assert.ElementsMatch(t, []string{filepath.Base(attempt), "geocompact-job-" + done.ID + ".plan.json", "geocompact-job-" + pending.ID + ".plan.json"}, bases)
	assert.NoFileExists(t, attempt)
	tbl = icebergtest.Load(t, cat, name)
	assert.Empty(t, digest.Diff(icebergtest.Digest(t, tbl)))
	assert.Len(t, icebergtest.DirFiles(t, dir), len(live)-3)
}
