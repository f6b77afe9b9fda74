package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/internal/testing/reliability"
	"github.com/geocompact/geocompact/internal/testing/testenv"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/table/config"
)

// envAsCLI makes the test binary behave as the geocompact binary, so the
// reliability tests can run (and kill) real child processes without a
// separate build.
const envAsCLI = "GEOCOMPACT_TEST_AS_CLI"

func TestMain(m *testing.M) {
	if os.Getenv(envAsCLI) == "1" {
		main()
		return
	}
	if spec := os.Getenv(envAsIcebergBinpack); spec != "" {
		runIcebergBinpack(spec)
	}
	if spec := os.Getenv(envAsWindows); spec != "" {
		writeBenchWindows(spec)
	}
	os.Exit(m.Run())
}

// longRun reports whether the long reliability suites were asked for
// (GEOCOMPACT_LONG=1, as .ci/run's long section sets it).
func longRun() bool { return os.Getenv("GEOCOMPACT_LONG") == "1" && !testing.Short() }

// childCLI returns a command that runs geocompact with args in a child
// process (this test binary, re-executed as the CLI).
func childCLI(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), envAsCLI+"=1")
	return cmd
}

// runChild runs geocompact with args in a child process and returns its
// exit code and output.
func runChild(t testing.TB, args ...string) cliResult {
	t.Helper()
	cmd := childCLI(t.Context(), args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run child geocompact: %v", err)
	}
	return cliResult{Code: code, Stdout: out.String(), Stderr: errOut.String()}
}

// hasCommand reports whether this build registers the subcommand name.
func hasCommand(name string) bool {
	g := &globalOptions{IO: &ioStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}}
	for _, c := range newRootCmd(g).Commands() {
		if c.Name() == name {
			return true
		}
	}
	return false
}

// needCommand ends the test when the build does not register the
// subcommand: skipped locally, failed under CI.
func needCommand(t testing.TB, name string) {
	t.Helper()
	if !hasCommand(name) {
		testenv.SkipOrFail(t, "geocompact %s is not in this build", name)
	}
}

// openWarehouse opens the embedded catalog of a local warehouse directory.
func openWarehouse(t testing.TB, dir string) catalog.Catalog {
	t.Helper()
	cat, err := catalogs.Open(t.Context(), catalogs.Spec{Warehouse: dir})
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

// openConfigCatalog opens the catalog name from the config file path.
func openConfigCatalog(t testing.TB, path, name string) catalog.Catalog {
	t.Helper()
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := cfg.Catalog(name, "")
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalogs.Open(t.Context(), spec)
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

func loadTable(t testing.TB, cat catalog.Catalog, name string) *table.Table {
	t.Helper()
	tbl, err := catalogs.LoadTable(t.Context(), cat, name)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

func digest(t testing.TB, tbl *table.Table) reliability.Digest {
	t.Helper()
	d, err := reliability.TableDigest(t.Context(), tbl, 0)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// checkIntact fails the test unless tbl holds exactly the rows of want, with
// no id twice and every file its metadata names present.
func checkIntact(t testing.TB, tbl *table.Table, want reliability.Digest) {
	t.Helper()
	got := digest(t, tbl)
	if !got.Equal(want) {
		t.Fatalf("table %s: digest %v, want %v", tbl.Identifier(), got, want)
	}
	if d := got.Duplicates(); len(d) > 0 {
		t.Fatalf("table %s: %d ids appear more than once, e.g. %v", tbl.Identifier(), len(d), d[:min(5, len(d))])
	}
	missing, err := reliability.MissingFiles(t.Context(), tbl)
	if err != nil {
		t.Fatal(err)
	}
	if len(missing) > 0 {
		t.Fatalf("table %s: %d referenced files are missing, e.g. %s", tbl.Identifier(), len(missing), missing[0])
	}
}

// TestNeedCommandFailsInCI checks that a test needing a subcommand this
// build lacks is skipped locally but fails under CI, never a silent skip.
func TestNeedCommandFailsInCI(t *testing.T) {
	require.True(t, hasCommand("rewrite"))
	t.Setenv("CI", "")
	ft := &endTB{TB: t}
	needCommand(ft, "no-such-command")
	assert.Equal(t, "skip", ft.ended)
	assert.Contains(t, ft.msg, "no-such-command")
	t.Setenv("CI", "true")
	ft = &endTB{TB: t}
	needCommand(ft, "no-such-command")
	assert.Equal(t, "fail", ft.ended)
	ft = &endTB{TB: t}
	needCommand(ft, "rewrite")
	assert.Empty(t, ft.ended)
}

// endTB records how a test would have ended instead of ending it.
type endTB struct {
	testing.TB
	ended, msg string
}

func (f *endTB) Helper() {}
func (f *endTB) Skipf(format string, args ...any) {
	f.ended, f.msg = "skip", fmt.Sprintf(format, args...)
}
func (f *endTB) Fatalf(format string, args ...any) {
	f.ended, f.msg = "fail", fmt.Sprintf(format, args...)
}
