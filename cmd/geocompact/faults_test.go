package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/internal/faultio"
	"github.com/geocompact/geocompact/internal/testing/reliability"
	"github.com/geocompact/geocompact/validate/validatetest"
)

// runCLIContext is runCLI with the context the command runs under.
func runCLIContext(ctx context.Context, t testing.TB, warehouse string, args ...string) cliResult {
	t.Helper()
	var out, errOut bytes.Buffer
	ios := &ioStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	full := append([]string{"--warehouse", warehouse, "--config", noConfig(t)}, args...)
	code := run(ctx, full, ios)
	return cliResult{Code: code, Stdout: out.String(), Stderr: errOut.String()}
}

// TestWriteFaultsLeaveNothing fails the writes of every writing command
// (ingest, rewrite sorted and binpack with partial progress, alter,
// expire) on a local Iceberg table: a full disk (ENOSPC) part-way through
// at several points of the bytes the command writes, an I/O error (EIO),
// and a store that refuses new files part-way. Each failed run must exit 1
// naming the failure, and leave no file behind that was not there before
// (no partial data file, manifest or metadata file) and the table reading
// its rows as before.
func TestWriteFaultsLeaveNothing(t *testing.T) {
	t.Parallel()
	const name = "f.pings"
	in := t.TempDir() + "/points.parquet"
	validatetest.Write(t, in, validatetest.File{Rows: validatetest.Points(3000), Geo: validatetest.Geo(""), Extra: true})
	commands := []struct {
		label string
		args  []string
	}{
		{"ingest", []string{"ingest", "--table", name, in}},
		{"rewrite-hilbert", []string{"rewrite", "--table", name, "--curve", "hilbert", "--option", "rewrite-all=true"}},
		{"rewrite-binpack-partial", []string{"rewrite", "--table", name, "--strategy", "binpack", "--option", "rewrite-all=true",
			"--option", "partial-progress.enabled=true", "--option", "max-file-group-size-bytes=20000"}},
		{"alter", []string{"alter", "--table", name, "--curve", "hilbert"}},
		{"expire", []string{"expire", "--table", name, "--older-than", "0s", "--retain-last", "1", "--force"}},
	}
	for _, c := range commands {
		t.Run(c.label, func(t *testing.T) {
			needCommand(t, c.args[0])
			t.Parallel()
			// Calibrate: how many bytes does the command write?
			calib := &faultio.Fault{After: math.MaxInt64, Err: faultio.ENOSPC}
			wh := faultTable(t, name)
			if r := runCLIContext(faultio.With(t.Context(), calib), t, wh, c.args...); r.Code != exitOK {
				t.Fatalf("calibration: exit %d: %s", r.Code, r.Stderr)
			}
			total := calib.Written()
			t.Logf("%s writes %d bytes", c.label, total)
			faults := []*faultio.Fault{
				{After: 0, Err: faultio.ENOSPC},
				{After: total / 3, Err: faultio.ENOSPC},
				{After: total * 2 / 3, Err: faultio.ENOSPC},
				{After: total - 1, Err: faultio.ENOSPC},
				{After: total / 2, Err: faultio.EIO},
				{After: total / 10, Err: faultio.EIO, AtCreate: true},
			}
			for _, f := range faults {
				t.Run(fmt.Sprintf("%v-%d-create=%v", f.Err, f.After, f.AtCreate), func(t *testing.T) {
					checkFault(t, name, c.args, f)
				})
			}
		})
	}
}

// unreferenced lists the files under the table's location that its
// metadata does not name.
func unreferenced(t testing.TB, wh, name string) []string {
	t.Helper()
	u, err := reliability.Unreferenced(t.Context(), loadTable(t, openWarehouse(t, wh), name))
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// faultTable generates a fragmented table in a new warehouse.
func faultTable(t testing.TB, name string) string {
	t.Helper()
	wh := t.TempDir()
	if _, err := bench.Generate(t.Context(), openWarehouse(t, wh), bench.GenerateConfig{Table: name, Rows: 3000, Commits: 8, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	return wh
}

func checkFault(t *testing.T, name string, args []string, f *faultio.Fault) {
	wh := faultTable(t, name)
	cat := openWarehouse(t, wh)
	want := digest(t, loadTable(t, cat, name))
	before := unreferenced(t, wh, name)
	r := runCLIContext(faultio.With(t.Context(), f), t, wh, args...)
	hit := f.Hit()
	if len(hit) == 0 {
		// A store refusing new files after the command's last create
		// changes nothing.
		if r.Code != exitOK {
			t.Fatalf("exit %d without the fault firing: %s", r.Code, r.Stderr)
		}
		t.Skipf("the fault found nothing to fail after %d bytes", f.After)
	}
	if r.Code != exitError {
		t.Fatalf("a failed write gave exit %d, want %d; stderr %q", r.Code, exitError, r.Stderr)
	}
	checkOneError(t, r, f.Err.Error())
	checkIntact(t, loadTable(t, openWarehouse(t, wh), name), want)
	var added []string
	for _, p := range unreferenced(t, wh, name) {
		if !slices.Contains(before, p) {
			added = append(added, p)
		}
	}
	if len(added) > 0 {
		t.Fatalf("the failed %s left %d files (fault hit %v): %s", args[0], len(added), hit, strings.Join(added, ", "))
	}
}
