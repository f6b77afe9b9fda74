package main

import (
	"bytes"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/maintain"
	"github.com/geocompact/geocompact/table/catalogs"
)

// TestMaintainReleasesLeaseOnSignal interrupts a running maintain with
// SIGINT and SIGTERM once it holds its lease: the run must stop, release
// the lease on its way out and leave the table as it was, so the next run
// is not refused for the lease's two hours.
func TestMaintainReleasesLeaseOnSignal(t *testing.T) {
	if testing.Short() {
		t.Skip("runs maintain in child processes")
	}
	const name = "geo.t"
	policy := filepath.Join(t.TempDir(), "policy.yaml")
	writeFile(t, policy, "gate:\n  min-avg-file-bytes: 1073741824\nrewrite:\n  curve: hilbert\n")
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			wh := t.TempDir()
			cat := openWarehouse(t, wh)
			if _, err := bench.Generate(t.Context(), cat, bench.GenerateConfig{Table: name, Rows: 60000, Commits: 30, Seed: 3}); err != nil {
				t.Fatal(err)
			}
			want := digest(t, loadTable(t, cat, name))
			cmd := childCLI(t.Context(), "--warehouse", wh, "--config", noConfig(t), "maintain", "--table", name, "--policy", policy)
			var errOut bytes.Buffer
			cmd.Stderr = &errOut
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(60 * time.Second)
			for !leaseHeld(t, cat, name) {
				if time.Now().After(deadline) {
					_ = cmd.Process.Kill()
					t.Fatalf("maintain never took its lease; stderr %q", errOut.String())
				}
				time.Sleep(20 * time.Millisecond)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			t.Logf("exit %d after %v: %s", cmd.ProcessState.ExitCode(), sig, errOut.String())
			if leaseHeld(t, cat, name) {
				t.Fatalf("maintain interrupted by %v left its lease; stderr %q", sig, errOut.String())
			}
			checkIntact(t, loadTable(t, openWarehouse(t, wh), name), want)
			if r := runCLI(t, wh, false, "maintain", "--table", name, "--policy", policy); r.Code == exitConflict {
				t.Fatalf("the next maintain is refused: %s", r.Stderr)
			}
		})
	}
}

// leaseHeld reports whether the table holds a maintain lease.
func leaseHeld(t testing.TB, cat catalog.Catalog, name string) bool {
	t.Helper()
	tbl, err := catalogs.LoadTable(t.Context(), cat, name)
	if err != nil {
		return false
	}
	for ref := range tbl.Metadata().Refs() {
		if ref == maintain.LeaseRef {
			return true
		}
	}
	return false
}
