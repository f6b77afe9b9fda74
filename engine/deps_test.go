package engine_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCoreIsFormatFree checks that no package of the rewrite core depends
// on iceberg-go or the Delta layer: formats reach the core only as a
// table.Table.
func TestCoreIsFormatFree(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", "./...").Output()
	require.NoError(t, err)
	for _, dep := range strings.Fields(string(out)) {
		assert.False(t, strings.HasPrefix(dep, "github.com/apache/iceberg-go"), "the core depends on %s", dep)
		assert.NotEqual(t, "github.com/geocompact/geocompact/delta", dep, "the core depends on the Delta layer")
	}
}
