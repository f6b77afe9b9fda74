package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/internal/testing/reliability"
	"github.com/geocompact/geocompact/maintain"
	"github.com/geocompact/geocompact/validate/validatetest"
)

// hostileCommand is one reading command run on a table (or an input file)
// whose Parquet footer lies.
type hostileCommand struct {
	label string
	// args are the arguments after the global flags; "{in}" stands for
	// the hostile input file.
	args []string
	// inputFile says the hostile file is the command's input, not one of
	// the table's data files.
	inputFile bool
	// metadataOnly commands read no data file and may succeed.
	metadataOnly bool
	// violation says the command reports a damaged file as a validation
	// violation (exit 3) rather than an error.
	violation bool
}

func hostileCommands(table, policy string) []hostileCommand {
	return []hostileCommand{
		{label: "validate-file", args: []string{"validate", "{in}"}, inputFile: true, violation: true},
		{label: "validate-table", args: []string{"validate", "--table", table}, violation: true},
		{label: "ingest", args: []string{"ingest", "--table", table, "{in}"}, inputFile: true, violation: true},
		{label: "rewrite", args: []string{"rewrite", "--table", table, "--curve", "hilbert", "--option", "rewrite-all=true"}},
		{label: "bench", args: []string{"bench", "--table", table, "--layouts", "unsorted,hilbert", "--window-count", "5"}},
		{label: "maintain", args: []string{"maintain", "--table", table, "--policy", policy}},
		{label: "inspect", args: []string{"inspect", "files", "--table", table}, metadataOnly: true},
	}
}

// TestHostileParquetFooters gives every reading command a Parquet file
// whose footer lies about the file (a 1 TiB column chunk, negative sizes,
// offsets past the end, a truncated footer, ...), as a table's data file
// or as the input. Each must end in a clean failure that names the file,
// with the exit code for bad input (3 where the command validates, 1
// otherwise; never 2, never a crash), leave no lease behind and write
// nothing. The commands run as child processes: a footer that made the
// process allocate what it declares killed it with "fatal error: out of
// memory", which no recover catches.
func TestHostileParquetFooters(t *testing.T) {
	const name = "bad.pings"
	policy := filepath.Join(t.TempDir(), "policy.yaml")
	writeFile(t, policy, "gate:\n  min-avg-file-bytes: 1048576\nrewrite:\n  curve: hilbert\n")
	src := filepath.Join(t.TempDir(), "points.parquet")
	validatetest.Write(t, src, validatetest.File{Rows: validatetest.Points(200), Geo: validatetest.Geo(""), Extra: true})
	good, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range reliability.HostileFooters() {
		t.Run(h.Name, func(t *testing.T) {
			for _, c := range hostileCommands(name, policy) {
				t.Run(c.label, func(t *testing.T) {
					needCommand(t, c.args[0])
					t.Parallel()
					runHostile(t, name, h, c, good)
				})
			}
		})
	}
}

func runHostile(t *testing.T, name string, h reliability.HostileFooter, c hostileCommand, good []byte) {
	wh := t.TempDir()
	if _, err := bench.Generate(t.Context(), openWarehouse(t, wh), bench.GenerateConfig{Table: name, Rows: 1200, Commits: 6, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	cat := openWarehouse(t, wh)
	snap := loadTable(t, cat, name).CurrentSnapshot().SnapshotID
	var target, in string
	if c.inputFile {
		in = filepath.Join(t.TempDir(), "hostile.parquet")
		target = in
		writeHostile(t, in, good, h)
	} else {
		target = someDataFile(t, wh, name)
		data, err := os.ReadFile(target)
		if err != nil {
			t.Fatal(err)
		}
		writeHostile(t, target, data, h)
	}
	before := treeState(t, wh)
	args := []string{"--warehouse", wh, "--config", noConfig(t)}
	for _, a := range c.args {
		args = append(args, strings.ReplaceAll(a, "{in}", in))
	}
	r := runChild(t, args...)
	if strings.Contains(r.Stderr, "fatal error") || strings.Contains(r.Stderr, "panic") || strings.Contains(r.Stderr, "goroutine ") {
		t.Fatalf("crashed (exit %d): %.2000s", r.Code, r.Stderr)
	}
	base := filepath.Base(target)
	switch {
	case c.metadataOnly && r.Code == exitOK:
	case c.violation && r.Code == exitViolation:
		if !strings.Contains(r.Stdout+r.Stderr, base) || !strings.Contains(r.Stdout+r.Stderr, "file.corrupt") {
			t.Fatalf("exit 3 without naming %s as file.corrupt; stdout %q stderr %q", base, r.Stdout, r.Stderr)
		}
	default:
		if r.Code != exitError {
			t.Fatalf("exit %d, want %d; stderr %q", r.Code, exitError, r.Stderr)
		}
		checkOneError(t, r, base)
	}
	tbl := loadTable(t, cat, name)
	if got := tbl.CurrentSnapshot().SnapshotID; got != snap {
		t.Fatalf("the table moved from snapshot %d to %d", snap, got)
	}
	for ref := range tbl.Metadata().Refs() {
		if ref == maintain.LeaseRef {
			t.Fatalf("the lease tag was left behind")
		}
	}
	if tbl.Properties()[maintain.PropLeaseOwner] != "" {
		t.Fatalf("a lease was left behind: %v", tbl.Properties())
	}
	after := treeState(t, wh)
	if c.label == "maintain" {
		// Taking and releasing the lease commits table metadata; no
		// data file may appear or change.
		before, after = dataFiles(before), dataFiles(after)
	}
	if !maps2Equal(before, after) {
		t.Fatalf("the command changed the warehouse: %s", treeDiff(before, after))
	}
}

// writeHostile writes good with its footer made hostile by h to path.
func writeHostile(t testing.TB, path string, good []byte, h reliability.HostileFooter) {
	t.Helper()
	bad, err := h.Apply(good)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, bad, 0o644); err != nil {
		t.Fatal(err)
	}
}

// dataFiles keeps the Parquet files of a tree state.
func dataFiles(st map[string]fileState) map[string]fileState {
	out := map[string]fileState{}
	for k, v := range st {
		if strings.HasSuffix(k, ".parquet") {
			out[k] = v
		}
	}
	return out
}
