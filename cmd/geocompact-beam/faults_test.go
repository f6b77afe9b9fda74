package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/internal/testing/enginetest"
	"github.com/geocompact/geocompact/job"
	"github.com/geocompact/geocompact/table/catalogs"
)

// driverArgsEnv, when set, makes the test binary a driver that is killed
// before it commits (see TestMain): the command's arguments, one a line.
const driverArgsEnv = "GEOCOMPACT_TEST_KILLED_DRIVER_ARGS"

// killedDriver runs the command as a driver process that SIGKILLs itself
// once the pipeline succeeded and its result was read, before the commit.
func killedDriver() {
	testHookBeforeCommit = func() { syscall.Kill(os.Getpid(), syscall.SIGKILL) }
	code := run(context.Background(), strings.Split(os.Getenv(driverArgsEnv), "\n"), os.Stdout, os.Stderr)
	os.Stderr.WriteString("the driver was not killed before its commit\n")
	os.Exit(100 + code)
}

var shuffled = map[string]string{"rewrite-all": "true", "target-file-size-bytes": "65536", "max-group-memory-bytes": "1048576"}

// TestDriverKilledBeforeCommit kills the driver after the job finished and
// before its commit: the table is unchanged, and what the job wrote stays
// until a run that can tell the job can no longer commit; the rerun
// commits and leaves exactly the files of the local engine.
func TestDriverKilledBeforeCommit(t *testing.T) {
	local, dist := twin(t, bench.GenerateConfig{Rows: 8000, Commits: 6}, nil)
	cfg := engine.Request{Curve: "hilbert", Options: shuffled}
	cat, err := catalogs.Open(t.Context(), local)
	require.NoError(t, err)
	_, err = enginetest.Rewrite(t.Context(), cat, "geo.t", cfg)
	require.NoError(t, err)
	before := snapshots(load(t, dist))
	files := dirFiles(t, dist.Warehouse)

	args := []string{"rewrite", "--warehouse", dist.Warehouse, "--table", "geo.t", "--curve", "hilbert", "--runner", "prism"}
	for k, v := range shuffled {
		args = append(args, "--option", k+"="+v)
	}
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), driverArgsEnv+"="+strings.Join(args, "\n"))
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "%s", out)
	require.Equal(t, syscall.SIGKILL, exit.Sys().(syscall.WaitStatus).Signal(), "%s", out)

	// Nothing committed; the job's files, result and marker are there.
	assert.Equal(t, before, snapshots(load(t, dist)))
	left := dirFiles(t, dist.Warehouse)
	assert.Greater(t, len(left), len(files))
	require.Len(t, jobLeftovers(t, dist.Warehouse), 2)

	// The killed job could still commit (its input files are live): a
	// sweep leaves it alone.
	dcat, err := catalogs.Open(t.Context(), dist)
	require.NoError(t, err)
	swept, err := job.Sweep(t.Context(), dcat, "geo.t", "")
	require.NoError(t, err)
	assert.Empty(t, swept)
	assert.Equal(t, left, dirFiles(t, dist.Warehouse))

	res, err := rewrite(t.Context(), dist, "geo.t", cfg, "prism")
	require.NoError(t, err)
	assert.True(t, res.Verified)
	assert.Len(t, snapshots(load(t, dist)), len(before)+1)
	assert.Equal(t, fileIDs(t, load(t, local)), fileIDs(t, load(t, dist)))
	assert.Len(t, dirFiles(t, dist.Warehouse), len(dirFiles(t, local.Warehouse)))
	assert.Empty(t, jobLeftovers(t, dist.Warehouse))
}

// snapshots returns the ids of every snapshot of tbl.
func snapshots(tbl *table.Table) []int64 {
	var ids []int64
	for _, s := range tbl.Metadata().Snapshots() {
		ids = append(ids, s.SnapshotID)
	}
	return ids
}

// jobLeftovers returns the result files jobs left in the table's
// metadata folder.
func jobLeftovers(t *testing.T, warehouse string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(warehouse, func(p string, d os.DirEntry, err error) error {
		if ok, _ := filepath.Match("geocompact-job-*", d.Name()); err == nil && ok {
			out = append(out, p)
		}
		return err
	}))
	return out
}
