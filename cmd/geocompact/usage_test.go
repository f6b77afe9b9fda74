package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestUsageErrorsExit2 checks that command-line mistakes exit 2 with one
// line naming the problem and, where one is close, the intended word.
func TestUsageErrorsExit2(t *testing.T) {
	t.Parallel()
	wh := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"rewrite", "--table", "a.b", "--curve", "hilbret"}, `unknown curve "hilbret" (want linear, zorder, hilbert, str, kd or auto); did you mean hilbert?`},
		{[]string{"rewrite", "--table", "a.b", "--sort-order", "x ASCC"}, `--sort-order: `},
		{[]string{"rewrite", "--table", "a.b", "--option"}, "flag needs an argument: --option"},
		{[]string{"rewrite", "--table", "a.b", "--option", "min-input-files"}, "option min-input-files needs a value"},
		{[]string{"rewrite", "--table", "a.b", "--option", "target-file-size-bytes=12zz"}, `size "12zz": want bytes with an optional unit`},
		{[]string{"rewrite", "--table", "a.b", "--option", "rewrite-al"}, `unknown option "rewrite-al"; did you mean rewrite-all?`},
		{[]string{"rewrite-manifests", "--table", "a.b", "--target-size-bytes", "8x"}, `size "8x"`},
		{[]string{"rewrit"}, "Did you mean this? rewrite"},
	} {
		r := runCLI(t, wh, false, tc.args...)
		assert.Equal(t, exitUsage, r.Code, "%v: %s", tc.args, r.Stderr)
		assert.Contains(t, r.Stderr, tc.want, tc.args)
		assert.Equal(t, 1, strings.Count(r.Stderr, "\n"), "%v: one line: %s", tc.args, r.Stderr)
	}
}

// TestOptionUnitsAndBareKeys checks that the CLI passes sizes with units
// and bare boolean keys through to a dry run.
func TestOptionUnitsAndBareKeys(t *testing.T) {
	t.Parallel()
	wh := t.TempDir()
	r := runCLI(t, wh, false, "rewrite-manifests", "--table", "a.b", "--target-size-bytes", "8MiB")
	assert.Equal(t, exitError, r.Code, "a good size gets as far as the table: %s", r.Stderr)
	assert.Contains(t, r.Stderr, "does not exist")
	r = runCLI(t, wh, false, "rewrite", "--table", "a.b", "--option", "rewrite-all", "--option", "target-file-size-bytes=128MiB")
	assert.Equal(t, exitError, r.Code, "good options get as far as the table: %s", r.Stderr)
}
