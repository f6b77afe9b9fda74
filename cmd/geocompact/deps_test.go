package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goList runs go list with args in this package's folder and returns the
// import paths it prints.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list"}, args...)...).Output()
	require.NoError(t, err, "go list %s", strings.Join(args, " "))
	return strings.Fields(string(out))
}

// TestBinaryLinksNoTestTool checks how internal/ is split: the packages
// under internal/testing are test tools that the binary never links, not
// even with every optional store and catalog built in, and every other
// package under internal/ is one the binary ships.
func TestBinaryLinksNoTestTool(t *testing.T) {
	t.Parallel()
	const toolPrefix = "github.com/geocompact/geocompact/internal/testing/"
	linked := goList(t, "-deps", ".")
	tagged := goList(t, "-deps", "-tags", "gcs azure glue hive", ".")
	var shipped, tools []string
	for _, p := range goList(t, "../../internal/...") {
		if strings.HasPrefix(p, toolPrefix) {
			tools = append(tools, p)
		} else {
			shipped = append(shipped, p)
		}
	}
	require.NotEmpty(t, tools, "no package under internal/testing")
	require.NotEmpty(t, shipped, "no shipped package under internal/")
	for _, p := range tools {
		assert.NotContains(t, tagged, p, "the binary links the test tool %s", p)
	}
	for _, p := range shipped {
		assert.Contains(t, linked, p, "the binary does not link %s: a package only tests use belongs under internal/testing", p)
	}
}
