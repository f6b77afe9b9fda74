package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/internal/testing/reliability"
)

// TestRewriteDeletesSurvivesSignals interrupts rewrite-deletes with SIGINT
// and SIGKILL at delays spread over a calibration run. After each, readers
// see the same rows, every file the table references exists, a run
// interrupted (not killed) before its commit leaves no delete file of its
// own behind, and a rerun succeeds.
func TestRewriteDeletesSurvivesSignals(t *testing.T) {
	if testing.Short() {
		t.Skip("runs rewrite-deletes in child processes")
	}
	t.Parallel()
	wh, tbl := morWarehouseN(t, 60)
	want := digest(t, tbl)
	pristine := filepath.Join(t.TempDir(), "pristine")
	copyTree(t, wh, pristine)
	args := []string{"--warehouse", wh, "--config", noConfig(t), "rewrite-deletes", "--table", "d.t", "--option", "rewrite-all=true"}
	start := time.Now()
	r := runChild(t, args...)
	require.Equal(t, exitOK, r.Code, r.Stderr)
	took := time.Since(start)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGKILL} {
		for _, frac := range []float64{0.3, 0.6, 0.85} {
			restoreTree(t, pristine, wh)
			cmd := childCLI(t.Context(), args...)
			var errOut bytes.Buffer
			cmd.Stderr = &errOut
			require.NoError(t, cmd.Start())
			time.Sleep(time.Duration(frac * float64(took)))
			_ = cmd.Process.Signal(sig)
			_ = cmd.Wait()
			t.Logf("%v after %.0f%% of %v: exit %d %s", sig, 100*frac, took.Round(time.Millisecond), cmd.ProcessState.ExitCode(), strings.TrimSpace(errOut.String()))
			after := loadTable(t, openWarehouse(t, wh), "d.t")
			got := digest(t, after)
			assert.Equal(t, want.IDs, got.IDs, "%v: readers see other rows", sig)
			missing, err := reliability.MissingFiles(t.Context(), after)
			require.NoError(t, err)
			assert.Empty(t, missing, "%v: the table references files that do not exist", sig)
			// An interrupt before the commit deletes what the run wrote;
			// one in the catalog's commit leaves an outcome that cannot be
			// known, so the files stay for orphan cleanup.
			if sig == syscall.SIGINT && !strings.Contains(errOut.String(), "commit the rewrite") {
				un, err := reliability.Unreferenced(t.Context(), after)
				require.NoError(t, err)
				for _, p := range un {
					assert.NotContains(t, p, "-deletes.", "an interrupted run left its file %s", p)
				}
			}
			r := runChild(t, args...)
			require.Equal(t, exitOK, r.Code, "rerun after %v: %s", sig, r.Stderr)
			assert.Equal(t, want.IDs, digest(t, loadTable(t, openWarehouse(t, wh), "d.t")).IDs)
		}
	}
}
