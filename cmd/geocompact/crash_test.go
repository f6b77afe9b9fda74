package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/internal/testing/reliability"
)

// partialProgressArgs make a rewrite of the crash table commit in four
// partial-progress batches of several small groups.
var partialProgressArgs = []string{
	"--option", "partial-progress.enabled=true", "--option", "partial-progress.max-commits=4",
	"--option", "max-file-group-size-bytes=300000", "--option", "target-file-size-bytes=100000",
}

// crashVariants are the rewrites the crash test kills.
var crashVariants = []struct {
	name string
	args []string
}{
	{"atomic-binpack", []string{"--strategy", "binpack"}},
	{"atomic-hilbert", []string{"--curve", "hilbert"}},
	{"partial-binpack", append([]string{"--strategy", "binpack"}, partialProgressArgs...)},
	{"partial-hilbert", append([]string{"--curve", "hilbert"}, partialProgressArgs...)},
}

// crashOutcome classifies where a kill landed, from what it left.
type crashOutcome string

const (
	killedBeforeWriting  crashOutcome = "planning-or-reading"   // no file written yet, nothing committed
	killedBeforeCommit   crashOutcome = "writing-or-pre-commit" // files written, nothing committed
	killedBetweenCommits crashOutcome = "between-commits"       // some partial-progress batches committed
	killedAfterCommit    crashOutcome = "after-last-commit"     // every batch committed, process still up
	finishedBeforeKill   crashOutcome = "finished"              // the process exited before the signal
)

// TestRewriteSurvivesSIGKILL runs geocompact rewrite (atomic and partial
// progress, binpack and hilbert) as a child process and SIGKILLs it after a
// seeded random delay spread over the duration of a calibration run (runs
// that finish before the signal are retried with a fresh delay). After
// every kill the table must hold the original rows exactly once, every
// committed snapshot must be complete and hold them too, every file the run
// left must be referenced or reported by orphan cleanup and removable, and a
// rerun must succeed. GEOCOMPACT_LONG=1 kills 13 times per variant (52 in
// all); otherwise once per variant.
func TestRewriteSurvivesSIGKILL(t *testing.T) {
	kills := 1
	if longRun() {
		kills = 13
	}
	seed := uint64(1)
	if s := os.Getenv("GEOCOMPACT_CRASH_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (GEOCOMPACT_CRASH_SEED), %d kills per variant", seed, kills)
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))

	// One generated warehouse, restored at the same path before every run
	// (the catalog records absolute file paths).
	dir := t.TempDir()
	wh, pristine := filepath.Join(dir, "wh"), filepath.Join(dir, "pristine")
	const name = "crash.pings"
	if _, err := bench.Generate(t.Context(), openWarehouse(t, wh), bench.GenerateConfig{Table: name, Rows: 24000, Commits: 24, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	base := loadTable(t, openWarehouse(t, wh), name)
	want := digest(t, base)
	baseSnap := base.CurrentSnapshot().SnapshotID
	copyTree(t, wh, pristine)

	counts := map[crashOutcome]int{}
	for _, v := range crashVariants {
		t.Run(v.name, func(t *testing.T) {
			args := append([]string{"--warehouse", wh, "--config", noConfig(t), "rewrite", "--table", name}, v.args...)
			restoreTree(t, pristine, wh)
			start := time.Now()
			r := runChild(t, append(args, "--json")...)
			took := time.Since(start)
			if r.Code != exitOK {
				t.Fatalf("calibration rewrite: exit %d, stderr %q", r.Code, r.Stderr)
			}
			var res struct {
				Snapshots int `json:"snapshots_committed"`
			}
			if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil || res.Snapshots == 0 {
				t.Fatalf("calibration rewrite committed %d snapshots (%v); output %q", res.Snapshots, err, r.Stdout)
			}
			t.Logf("calibration: %v, %d snapshots", took.Round(time.Millisecond), res.Snapshots)
			// Stratified over [0, took): kill i lands in its own slice. A
			// run that finishes before its signal does not count; it is
			// retried with a delay in 40-90% of took, up to twice as many
			// attempts.
			for i, killed := 0, 0; killed < kills && i < 2*kills; i++ {
				frac := (float64(i) + rng.Float64()) / float64(kills)
				if i >= kills {
					// A retry: aim at the writing and committing phase.
					frac = 0.4 + 0.5*rng.Float64()
				}
				delay := time.Duration(frac * float64(took))
				restoreTree(t, pristine, wh)
				out := killAfter(t, delay, args...)
				if out != finishedBeforeKill {
					out = classifyCrash(t, wh, name, baseSnap, res.Snapshots)
					killed++
				}
				counts[out]++
				t.Logf("attempt %d after %v: %s", i, delay.Round(time.Millisecond), out)
				checkAfterCrash(t, wh, name, baseSnap, want)
				// The same rewrite, run again, succeeds and leaves the rows intact.
				if r := runChild(t, args...); r.Code != exitOK {
					t.Fatalf("rerun after attempt %d: exit %d, stderr %q", i, r.Code, r.Stderr)
				}
				tbl := loadTable(t, openWarehouse(t, wh), name)
				checkIntact(t, tbl, want)
			}
		})
	}
	total := 0
	for k, n := range counts {
		if k != finishedBeforeKill {
			total += n
		}
	}
	t.Logf("SUMMARY kills survived: %d (%v), rows checked per kill: %d", total, counts, want.Rows)
}

// killAfter starts geocompact with args and SIGKILLs it after delay. It
// reports finishedBeforeKill when the process had already exited.
func killAfter(t *testing.T, delay time.Duration, args ...string) crashOutcome {
	t.Helper()
	cmd := childCLI(t.Context(), args...)
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("rewrite failed on its own before the kill: %v, stderr %q", err, errOut.String())
		}
		return finishedBeforeKill
	case <-time.After(delay):
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	err := <-done
	var ee *exec.ExitError
	if err == nil || (asExitError(err, &ee) && ee.ExitCode() >= 0) {
		// It exited by itself in the instant before the signal.
		if err != nil {
			t.Fatalf("rewrite failed on its own: %v, stderr %q", err, errOut.String())
		}
		return finishedBeforeKill
	}
	return ""
}

func asExitError(err error, target **exec.ExitError) bool {
	ee, ok := err.(*exec.ExitError)
	if ok {
		*target = ee
	}
	return ok
}

// classifyCrash says where a kill landed from the snapshots committed since
// base and the files left unreferenced.
func classifyCrash(t *testing.T, wh, name string, base int64, full int) crashOutcome {
	t.Helper()
	tbl := loadTable(t, openWarehouse(t, wh), name)
	committed := 0
	for _, s := range tbl.Metadata().Snapshots() {
		if s.ParentSnapshotID != nil && s.SnapshotID != base && s.SequenceNumber > snapshotSeq(tbl, base) {
			committed++
		}
	}
	un, err := reliability.Unreferenced(t.Context(), tbl)
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case committed == 0 && len(un) == 0:
		return killedBeforeWriting
	case committed == 0:
		return killedBeforeCommit
	case committed < full:
		return killedBetweenCommits
	}
	return killedAfterCommit
}

func snapshotSeq(tbl *table.Table, id int64) int64 {
	s := tbl.Metadata().SnapshotByID(id)
	if s == nil {
		return 0
	}
	return s.SequenceNumber
}

// checkAfterCrash checks the table a killed rewrite left: it loads, holds
// the original rows once each, every snapshot since base holds them too
// with every file present, and the files nothing references are exactly
// those orphan cleanup reports, and removing them changes nothing.
func checkAfterCrash(t *testing.T, wh, name string, base int64, want reliability.Digest) {
	t.Helper()
	ctx := t.Context()
	tbl := loadTable(t, openWarehouse(t, wh), name)
	checkIntact(t, tbl, want)
	for _, s := range tbl.Metadata().Snapshots() {
		if s.SequenceNumber < snapshotSeq(tbl, base) {
			continue
		}
		d, err := reliability.TableDigest(ctx, tbl, s.SnapshotID)
		if err != nil {
			t.Fatalf("snapshot %d: %v", s.SnapshotID, err)
		}
		if !d.Equal(want) {
			t.Fatalf("snapshot %d (%s) holds %v, want %v", s.SnapshotID, s.Summary.Operation, d, want)
		}
	}
	un, err := reliability.Unreferenced(ctx, tbl)
	if err != nil {
		t.Fatal(err)
	}
	// Age every file so a 1s retention sees what the killed run left.
	backdate(t, filepath.Join(wh, "crash.db"), time.Hour)
	needCommand(t, "orphans")
	r := runChild(t, "--warehouse", wh, "--config", noConfig(t), "orphans", "--table", name, "--older-than", "1s", "--dry-run", "--force")
	if r.Code != exitOK {
		t.Fatalf("orphans --dry-run: exit %d, stderr %q", r.Code, r.Stderr)
	}
	for _, p := range un {
		if !strings.Contains(r.Stdout, filepath.Base(p)) {
			t.Fatalf("orphans --dry-run does not report unreferenced %s; stdout %q", p, r.Stdout)
		}
	}
	res, err := tbl.DeleteOrphanFiles(ctx, table.WithFilesOlderThan(time.Second))
	if err != nil {
		t.Fatalf("orphan cleanup: %v", err)
	}
	removed := make([]string, len(res.OrphanFileLocations))
	for i, p := range res.OrphanFileLocations {
		removed[i] = reliability.Normalize(p)
	}
	slices.Sort(removed)
	if !slices.Equal(removed, un) {
		t.Fatalf("orphan cleanup removed %d files, want the %d unreferenced ones; removed %s, unreferenced %s",
			len(removed), len(un), head(removed), head(un))
	}
	tbl = loadTable(t, openWarehouse(t, wh), name)
	checkIntact(t, tbl, want)
	if left, err := reliability.Unreferenced(ctx, tbl); err != nil || len(left) > 0 {
		t.Fatalf("after orphan cleanup: unreferenced %v, err %v", left, err)
	}
}

// head prints the first few entries of a long list.
func head(s []string) string {
	if len(s) > 3 {
		return fmt.Sprintf("%v ... (%d more)", s[:3], len(s)-3)
	}
	return fmt.Sprint(s)
}

// backdate sets the modification time of every file under dir to age ago.
func backdate(t testing.TB, dir string, age time.Duration) {
	t.Helper()
	when := time.Now().Add(-age)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		return os.Chtimes(p, when, when)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// copyTree copies the directory src to dst (which must not exist).
func copyTree(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// restoreTree replaces dst with a copy of src.
func restoreTree(t testing.TB, src, dst string) {
	t.Helper()
	if err := os.RemoveAll(dst); err != nil {
		t.Fatal(err)
	}
	copyTree(t, src, dst)
}
