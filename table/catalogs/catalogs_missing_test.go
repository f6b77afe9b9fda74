//go:build !glue && !hive

package catalogs_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/table/catalogs"
)

// TestCatalogsLeftOut checks that a glue or hive catalog in a build that
// leaves it out fails with the build tag that adds it, before anything
// is reached.
func TestCatalogsLeftOut(t *testing.T) {
	for _, typ := range []string{"glue", "hive"} {
		_, err := catalogs.Open(t.Context(), catalogs.Spec{Name: "prod", Type: typ, Props: map[string]string{"uri": "thrift://127.0.0.1:1"}})
		require.Error(t, err, typ)
		assert.ErrorContains(t, err, "not in this build of geocompact; build it with -tags "+typ, typ)
	}
}
