package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/maintain"
)

// TestMaintainProgressOnTerminalOnly checks that maintain draws its
// progress on a terminal only: nothing when piped, with --json or with
// --quiet.
func TestMaintainProgressOnTerminalOnly(t *testing.T) {
	wh := generated(t, 4)
	policy := filepath.Join(t.TempDir(), "p.yaml")
	writeFile(t, policy, "gate:\n  min-avg-file-bytes: 1073741824\n")
	for _, tc := range []struct {
		tty  bool
		args []string
		want bool
	}{
		{true, nil, true},
		{false, nil, false},
		{true, []string{"--quiet"}, false},
		{true, []string{"-q"}, false},
		{true, []string{"--json"}, false},
	} {
		args := append(append([]string{}, tc.args...), "maintain", "--table", "geo.t", "--policy", policy)
		r := runCLI(t, wh, tc.tty, args...)
		require.Equal(t, exitOK, r.Code, r.Stderr)
		if tc.want {
			assert.Contains(t, r.Stderr, "maintain: step 1/8 measure", args)
		} else {
			assert.Empty(t, r.Stderr, "tty=%v %v", tc.tty, args)
		}
	}
}

// TestProgressTexts checks the status lines of rewrite and maintain:
// groups and bytes done, the step and the phase.
func TestProgressTexts(t *testing.T) {
	e := engine.Progress{Group: 2, Groups: 5, GroupsDone: 1, Phase: "sorting", Step: 3, Steps: 8, BytesDone: 3 << 20, Bytes: 12 << 20}
	assert.Equal(t, "1/5 groups done (3.0 MiB of 12.0 MiB); group 2: sorting unit 3 of 8", rewriteProgressText(e))
	e = engine.Progress{Groups: 5, GroupsDone: 5, Phase: "committing", BytesDone: 12 << 20, Bytes: 12 << 20}
	assert.Equal(t, "5/5 groups done (12.0 MiB of 12.0 MiB); committing", rewriteProgressText(e))

	var lines []string
	for _, m := range []maintain.Progress{
		{Step: "measure", Index: 1, Steps: 7},
		{Step: "rewrite", Index: 3, Steps: 7, Rewrite: &engine.Progress{Group: 1, Groups: 2, Phase: "reading", Bytes: 1 << 20}},
	} {
		lines = append(lines, maintainProgressText(m))
	}
	assert.Equal(t, []string{
		"step 1/7 measure",
		"step 3/7 rewrite: 0/2 groups done (0 B of 1.0 MiB); group 1: reading",
	}, lines)
}
