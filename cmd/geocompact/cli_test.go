package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
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

// TestRunErrorsAreNotUsage checks that an error of a command that ran
// exits 1 even when its text reads like one of cobra's (an EINVAL I/O
// error says "invalid argument"), while cobra's own rejections exit 2.
func TestRunErrorsAreNotUsage(t *testing.T) {
	saved := commands
	t.Cleanup(func() { commands = saved })
	commands = append(slices.Clip(commands), func(*globalOptions) *cobra.Command {
		return &cobra.Command{Use: "einval", Args: cobra.NoArgs, RunE: func(*cobra.Command, []string) error {
			return fmt.Errorf("read table: %w", &fs.PathError{Op: "read", Path: "/data/x.parquet", Err: syscall.EINVAL})
		}}
	})
	r := runCLI(t, "", false, "einval")
	assert.Equal(t, exitError, r.Code, "stderr %q", r.Stderr)
	assert.Contains(t, r.Stderr, "invalid argument")
	r = runCLI(t, "", false, "einval", "extra")
	assert.Equal(t, exitUsage, r.Code, "stderr %q", r.Stderr)
}
