package validate_test

import (
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/delta"
	format "github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/deltatable"
	"github.com/geocompact/geocompact/table/icebergtable"
	"github.com/geocompact/geocompact/validate"
	"github.com/geocompact/geocompact/validate/tablecheck"
)

// checkIceberg validates tbl whole, at its current snapshot.
func checkIceberg(t testing.TB, tbl *table.Table, cfg validate.Config) (*validate.TableReport, error) {
	t.Helper()
	it, err := icebergtable.Loaded(t.Context(), nil, strings.Join(tbl.Identifier(), "."), tbl)
	require.NoError(t, err)
	return tablecheck.Check(t.Context(), it.Describe(), cfg)
}

// checkDelta validates the Delta table tbl at dir with the default
// checks, at its latest version.
func checkDelta(t testing.TB, tbl *delta.Table, dir string) (*validate.TableReport, error) {
	t.Helper()
	dt, err := deltatable.Open(t.Context(), tbl, dir, format.ForRead)
	require.NoError(t, err)
	return tablecheck.Check(t.Context(), dt, validate.DefaultConfig())
}
