package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/internal/testing/enginetest"
	"github.com/geocompact/geocompact/table/catalogs"
)

// TestMultiProcess submits the rewrite to a standalone Prism job server
// whose workers come from a worker pool (--environment_type=EXTERNAL):
// the Job and Fn API path Flink and Spark use. It builds prism, boot and
// this command, so it runs in the long suite only.
func TestMultiProcess(t *testing.T) {
	if os.Getenv("GEOCOMPACT_LONG") == "" {
		t.Skip("set GEOCOMPACT_LONG=1 to run the multi-process pipeline")
	}
	dir := t.TempDir()
	build := func(out, pkg string) string {
		p := filepath.Join(dir, out)
		cmd := exec.Command("go", "build", "-o", p, pkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		b, err := cmd.CombinedOutput()
		require.NoError(t, err, "build %s: %s", pkg, b)
		return p
	}
	prism := build("prism", "github.com/apache/beam/sdks/v2/go/cmd/prism")
	boot := build("boot", "github.com/apache/beam/sdks/v2/go/container")
	self := build("geocompact-beam", ".")

	removeWorkerCopies(t, self)
	jobPort := freePort(t)
	start(t, dir, prism, "--job_port", fmt.Sprint(jobPort), "--serve_http=false")
	start(t, dir, boot, "--worker_pool")
	waitPort(t, jobPort)
	waitPort(t, 50000)

	local, dist := twin(t, bench.GenerateConfig{Rows: 12000, Commits: 8, PartitionBy: "day(ts)"}, nil)
	opts := []string{"--option", "rewrite-all=true", "--option", "target-file-size-bytes=65536", "--option", "max-group-memory-bytes=1048576"}
	cat, err := catalogs.Open(t.Context(), local)
	require.NoError(t, err)
	_, err = enginetest.Rewrite(t.Context(), cat, "geo.t", engine.Request{Curve: "hilbert", Options: map[string]string{
		"rewrite-all": "true", "target-file-size-bytes": "65536", "max-group-memory-bytes": "1048576"}})
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	args := append([]string{"rewrite", "--warehouse", dist.Warehouse, "--table", "geo.t", "--curve", "hilbert", "--json",
		"--runner=prism", fmt.Sprintf("--endpoint=localhost:%d", jobPort),
		"--environment_type=EXTERNAL", "--environment_config=localhost:50000", "--worker_binary=" + self}, opts...)
	cmd := exec.CommandContext(ctx, self, args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	require.NoError(t, err, "%s", errText(err))
	assert.Contains(t, string(out), `"runner": "prism"`)
	assert.Equal(t, fileIDs(t, load(t, local)), fileIDs(t, load(t, dist)))
}

// removeWorkerCopies removes, when the test ends, the copies of self that
// boot makes for every worker (in /tmp/binNNN/worker, a fixed place):
// those that appeared during the test and have self's size.
func removeWorkerCopies(t *testing.T, self string) {
	before, _ := filepath.Glob("/tmp/bin*")
	st, err := os.Stat(self)
	require.NoError(t, err)
	t.Cleanup(func() {
		after, _ := filepath.Glob("/tmp/bin*")
		for _, d := range after {
			if slices.Contains(before, d) {
				continue
			}
			if w, err := os.Stat(filepath.Join(d, "worker")); err == nil && w.Size() == st.Size() {
				os.RemoveAll(d)
			}
		}
	})
}

func errText(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// start runs a server in dir until the test ends.
func start(t *testing.T, dir, bin string, args ...string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
}

func waitPort(t *testing.T, port int) {
	t.Helper()
	for range 300 {
		if c, err := net.Dial("tcp", fmt.Sprintf("localhost:%d", port)); err == nil {
			c.Close()
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("nothing listens on port %d", port)
}
