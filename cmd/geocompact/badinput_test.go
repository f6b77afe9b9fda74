package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/internal/testing/reliability"
	"github.com/geocompact/geocompact/validate/validatetest"
)

// tableCommand is one command run against a damaged table. readsData says
// whether it must read data files (and so must fail when one is damaged);
// the others only read metadata.
type tableCommand struct {
	label     string // subtest name
	args      []string
	readsData bool
}

func (c tableCommand) name() string { return c.args[0] }

// badInputCommands lists every command that takes --table, with arguments
// that would make it do real work on a healthy table (ingest appends a
// small GeoParquet file written into a temporary directory).
func badInputCommands(t testing.TB, table string) []tableCommand {
	t.Helper()
	in := filepath.Join(t.TempDir(), "points.parquet")
	validatetest.Write(t, in, validatetest.File{Rows: validatetest.Points(20), Geo: validatetest.Geo(""), Extra: true})
	return []tableCommand{
		{"ingest", []string{"ingest", "--table", table, in}, false},
		{"rewrite-hilbert", []string{"rewrite", "--table", table, "--curve", "hilbert", "--option", "rewrite-all=true"}, true},
		{"rewrite-binpack-partial", []string{"rewrite", "--table", table, "--strategy", "binpack", "--option", "rewrite-all=true", "--option", "partial-progress.enabled=true"}, true},
		{"validate", []string{"validate", "--table", table}, true},
		{"bench", []string{"bench", "--table", table, "--layouts", "unsorted,hilbert", "--window-count", "5"}, true},
		{"inspect", []string{"inspect", "files", "--table", table}, false},
		{"metrics", []string{"metrics", "--table", table}, false},
		{"expire", []string{"expire", "--table", table, "--older-than", "0s", "--retain-last", "1", "--force"}, false},
		{"orphans", []string{"orphans", "--table", table, "--older-than", "1s", "--dry-run", "--force"}, false},
		{"rewrite-manifests", []string{"rewrite-manifests", "--table", table}, false},
		{"rewrite-deletes", []string{"rewrite-deletes", "--table", table, "--option", "rewrite-all=true"}, false},
		{"advise", []string{"advise", "--table", table}, false},
		{"maintain", []string{"maintain", "--table", table}, false},
	}
}

// TestBadInput gives every command a missing table, a corrupt metadata
// file, a data file that disappeared, a truncated Parquet data file and an
// unreadable warehouse. Each must fail with one error line that names the
// problem, a non-zero exit and no panic, and leave the table as it was.
func TestBadInput(t *testing.T) {
	const name = "bad.pings"
	type damage struct {
		name string
		// apply damages the table in wh and returns what the error must
		// mention.
		apply func(t *testing.T, wh string) string
		// dataOnly restricts the case to commands that read data files.
		dataOnly bool
	}
	cases := []damage{
		{name: "missing-table", apply: func(t *testing.T, wh string) string { return "" }},
		{name: "corrupt-metadata", apply: func(t *testing.T, wh string) string {
			tbl := loadTable(t, openWarehouse(t, wh), name)
			p := reliability.Normalize(tbl.MetadataLocation())
			writeFile(t, p, `{"format-version": 2, "table-uuid": "not json`)
			// iceberg-go's parse error does not carry the path.
			return "invalid metadata"
		}},
		{name: "data-file-gone", dataOnly: true, apply: func(t *testing.T, wh string) string {
			p := someDataFile(t, wh, name)
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			return filepath.Base(p)
		}},
		{name: "truncated-parquet", dataOnly: true, apply: func(t *testing.T, wh string) string {
			p := someDataFile(t, wh, name)
			st, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(p, st.Size()/2); err != nil {
				t.Fatal(err)
			}
			return filepath.Base(p)
		}},
	}
	for _, dc := range cases {
		t.Run(dc.name, func(t *testing.T) {
			for _, c := range badInputCommands(t, name) {
				if dc.dataOnly && !c.readsData {
					continue
				}
				t.Run(c.label, func(t *testing.T) {
					needCommand(t, c.name())
					wh := t.TempDir()
					args := c.args
					want := "bad.absent"
					if dc.name == "missing-table" {
						args = slices.Clone(args)
						args[slices.Index(args, name)] = want
						if _, err := bench.Generate(t.Context(), openWarehouse(t, wh), bench.GenerateConfig{Table: name, Rows: 500, Commits: 6, Seed: 5}); err != nil {
							t.Fatal(err)
						}
					} else {
						if _, err := bench.Generate(t.Context(), openWarehouse(t, wh), bench.GenerateConfig{Table: name, Rows: 2000, Commits: 8, Seed: 5}); err != nil {
							t.Fatal(err)
						}
						want = dc.apply(t, wh)
					}
					before := treeState(t, wh)
					r := runCLI(t, wh, false, args...)
					if c.name() == "validate" && r.Code == exitViolation && dc.dataOnly {
						// validate reports a damaged file as a violation.
						if !strings.Contains(r.Stdout, want) || !strings.Contains(r.Stdout, "file.corrupt") {
							t.Fatalf("validate exit 3 without naming %s as file.corrupt; stdout %q", want, r.Stdout)
						}
					} else {
						checkOneError(t, r, want)
					}
					if after := treeState(t, wh); !maps2Equal(before, after) {
						t.Fatalf("the command changed the warehouse: %s", treeDiff(before, after))
					}
				})
			}
		})
	}

	t.Run("warehouse-is-a-file", func(t *testing.T) {
		wh := filepath.Join(t.TempDir(), "not-a-dir")
		writeFile(t, wh, "x")
		for _, c := range badInputCommands(t, name) {
			t.Run(c.label, func(t *testing.T) {
				needCommand(t, c.name())
				checkOneError(t, runCLI(t, wh, false, c.args...), "not-a-dir")
			})
		}
	})

	t.Run("catalog-db-corrupt", func(t *testing.T) {
		wh := t.TempDir()
		if _, err := bench.Generate(t.Context(), openWarehouse(t, wh), bench.GenerateConfig{Table: name, Rows: 500, Commits: 2, Seed: 5}); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"catalog.db-wal", "catalog.db-shm"} {
			_ = os.Remove(filepath.Join(wh, f))
		}
		writeFile(t, filepath.Join(wh, "catalog.db"), strings.Repeat("this is not a SQLite database\n", 200))
		before := treeState(t, wh)
		for _, c := range badInputCommands(t, name) {
			t.Run(c.label, func(t *testing.T) {
				needCommand(t, c.name())
				checkOneError(t, runCLI(t, wh, false, c.args...), "catalog")
			})
		}
		if after := treeState(t, wh); !maps2Equal(before, after) {
			t.Fatalf("the commands changed the warehouse: %s", treeDiff(before, after))
		}
	})
}

// checkOneError fails unless r is a failure reported as exactly one
// "geocompact: ..." line on stderr that mentions want (case-insensitive),
// with no panic.
func checkOneError(t testing.TB, r cliResult, want string) {
	t.Helper()
	if r.Code == exitOK {
		t.Fatalf("exit 0, want a failure; stdout %q", r.Stdout)
	}
	if strings.Contains(r.Stderr, "panic:") || strings.Contains(r.Stderr, "goroutine ") {
		t.Fatalf("panicked: %s", r.Stderr)
	}
	var errs []string
	for _, l := range strings.Split(r.Stderr, "\n") {
		if strings.HasPrefix(l, "geocompact: ") {
			errs = append(errs, l)
		}
	}
	if len(errs) != 1 {
		t.Fatalf("want one error line, got %d; stderr %q", len(errs), r.Stderr)
	}
	if !strings.Contains(strings.ToLower(errs[0]), strings.ToLower(want)) {
		t.Fatalf("error %q does not name %q", errs[0], want)
	}
	t.Logf("exit %d: %s", r.Code, errs[0])
}

// someDataFile returns the local path of one live data file of the table.
func someDataFile(t testing.TB, wh, name string) string {
	t.Helper()
	tbl := loadTable(t, openWarehouse(t, wh), name)
	tasks, err := tbl.Scan().PlanFiles(t.Context())
	if err != nil || len(tasks) == 0 {
		t.Fatalf("plan files: %d tasks, %v", len(tasks), err)
	}
	return reliability.Normalize(tasks[len(tasks)/2].File.FilePath())
}

// fileState is what treeState records of one file.
type fileState struct {
	size    int64
	modTime time.Time
}

// treeState records every file under dir except the SQLite catalog's
// journal files, which reads may touch.
func treeState(t testing.TB, dir string) map[string]fileState {
	t.Helper()
	st := map[string]fileState{}
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if info.IsDir() || strings.Contains(filepath.Base(p), "catalog.db") {
			return nil
		}
		st[p] = fileState{info.Size(), info.ModTime()}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func maps2Equal(a, b map[string]fileState) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !w.modTime.Equal(v.modTime) || w.size != v.size {
			return false
		}
	}
	return true
}

// treeDiff names the first files that differ between two states.
func treeDiff(a, b map[string]fileState) string {
	var d []string
	for k := range b {
		if _, ok := a[k]; !ok {
			d = append(d, "added "+filepath.Base(k))
		}
	}
	for k, v := range a {
		if w, ok := b[k]; !ok {
			d = append(d, "removed "+filepath.Base(k))
		} else if w != v {
			d = append(d, "changed "+filepath.Base(k))
		}
	}
	slices.Sort(d)
	return head(d)
}

// TestBadInputS3Interrupted stops the S3 server under a running rewrite
// (at fractions of a calibration run's duration) and under every command: each must fail with
// one error naming the connection problem, and once the server is back the
// table must hold the same rows with every file present, and a rerun must
// succeed.
func TestBadInputS3Interrupted(t *testing.T) {
	s3 := reliability.StartS3(t)
	srv := s3.Server()
	cfg := s3.WriteConfig(t, t.TempDir(), false)
	const name = "lake.pings"
	if r := runCLI(t, "", false, s3Args(cfg, "generate", "--table", name, "--rows", "30000", "--commits", "30", "--seed", "9")...); r.Code != exitOK {
		t.Fatalf("generate: exit %d, stderr %q", r.Code, r.Stderr)
	}
	cat := openConfigCatalog(t, cfg, reliability.CatalogName)
	want := digest(t, loadTable(t, cat, name))
	connErr := func(s string) bool {
		s = strings.ToLower(s)
		// A server stopped mid-response cuts a read short without naming
		// the address: the message must then say so in words.
		return strings.Contains(s, "connection refused") || strings.Contains(s, "connect:") || strings.Contains(s, srv.Addr) ||
			strings.Contains(s, "the connection to the store was cut")
	}

	t.Run("server-down", func(t *testing.T) {
		srv.Stop()
		defer func() {
			if err := srv.Restart(); err != nil {
				t.Fatal(err)
			}
		}()
		for i, c := range badInputCommands(t, name) {
			t.Run(c.label, func(t *testing.T) {
				if i%3 != 0 && !longRun() {
					// Each waits out the SDK's retries; a third of them
					// show the point, GEOCOMPACT_LONG=1 runs all.
					t.Skip("one command in three without GEOCOMPACT_LONG=1")
				}
				needCommand(t, c.name())
				r := runCLI(t, "", false, s3Args(cfg, c.args...)...)
				checkOneError(t, r, "")
				if !connErr(r.Stderr) {
					t.Fatalf("error does not name the connection problem: %q", r.Stderr)
				}
			})
		}
	})

	// Calibrate: how long does the rewrite take with the server up?
	rewrite := s3Args(cfg, "rewrite", "--table", name, "--curve", "hilbert", "--option", "rewrite-all=true")
	start := time.Now()
	if r := runChild(t, rewrite...); r.Code != exitOK {
		t.Fatalf("calibration rewrite: exit %d, stderr %q", r.Code, r.Stderr)
	}
	took := time.Since(start)
	t.Logf("calibration: rewrite took %v", took.Round(time.Millisecond))
	fractions := []float64{0.6}
	if longRun() {
		fractions = []float64{0.15, 0.3, 0.45, 0.6, 0.75, 0.9}
	}
	for _, f := range fractions {
		d := time.Duration(f * float64(took)).Round(time.Millisecond)
		t.Run("stop-after-"+d.String(), func(t *testing.T) {
			// Halve the delay while the rewrite outruns it.
			for ; ; d /= 2 {
				cmd := childCLI(t.Context(), rewrite...)
				var errOut strings.Builder
				cmd.Stderr = &errOut
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				time.Sleep(d)
				srv.Stop()
				err := cmd.Wait()
				if rerr := srv.Restart(); rerr != nil {
					t.Fatal(rerr)
				}
				if err != nil {
					r := cliResult{Code: cmd.ProcessState.ExitCode(), Stderr: errOut.String()}
					checkOneError(t, r, "")
					if !connErr(r.Stderr) {
						t.Fatalf("error does not name the connection problem: %q", r.Stderr)
					}
					break
				}
				checkIntact(t, loadTable(t, cat, name), want)
				if d < 50*time.Millisecond {
					t.Fatalf("the rewrite always finished before the server stopped")
				}
				t.Logf("rewrite finished before the server stopped after %v; trying %v", d, d/2)
			}
			checkIntact(t, loadTable(t, cat, name), want)
			if r := runCLI(t, "", false, rewrite...); r.Code != exitOK {
				t.Fatalf("rerun: exit %d, stderr %q", r.Code, r.Stderr)
			}
			checkIntact(t, loadTable(t, cat, name), want)
		})
	}
}
