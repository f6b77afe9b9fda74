package main

import (
	"bytes"
	"strings"
	"testing"
)

// cliResult is what one CLI invocation produced.
type cliResult struct {
	Code           int
	Stdout, Stderr string
}

// runCLI runs the geocompact root command with args against warehouse (a
// fresh t.TempDir() when empty) and returns its exit code and output. tty
// pretends stdout and stderr are terminals.
func runCLI(t testing.TB, warehouse string, tty bool, args ...string) cliResult {
	t.Helper()
	if warehouse == "" {
		warehouse = t.TempDir()
	}
	var out, errOut bytes.Buffer
	ios := &ioStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, OutTTY: tty, ErrTTY: tty}
	full := append([]string{"--warehouse", warehouse, "--config", noConfig(t)}, args...)
	code := run(t.Context(), full, ios)
	return cliResult{Code: code, Stdout: out.String(), Stderr: errOut.String()}
}

// noConfig returns the path of an empty config file, so tests never read
// the developer's own config.
func noConfig(t testing.TB) string {
	t.Helper()
	p := t.TempDir() + "/geocompact.yaml"
	writeFile(t, p, "{}\n")
	return p
}

func TestUnknownCommandIsUsageError(t *testing.T) {
	r := runCLI(t, "", false, "frobnicate")
	if r.Code != exitUsage {
		t.Fatalf("exit %d, want %d; stderr %q", r.Code, exitUsage, r.Stderr)
	}
	if !strings.Contains(r.Stderr, "frobnicate") {
		t.Fatalf("stderr %q does not name the command", r.Stderr)
	}
}

func TestUnknownCatalogNamed(t *testing.T) {
	r := runCLI(t, "", false, "--catalog", "nope", "inspect", "files", "--table", "a.b")
	if r.Code != exitError {
		t.Fatalf("exit %d, want %d; stderr %q", r.Code, exitError, r.Stderr)
	}
	if !strings.Contains(r.Stderr, `"nope"`) {
		t.Fatalf("stderr %q does not name the catalog", r.Stderr)
	}
}
