package bench

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/alter"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/table/icebergtable"
)

// TestRunAutoAndRecordedLayout: bench measures auto with the engine's
// --curve auto rewrite (whose commit records the choice), and measures
// every layout whatever layout the source table records.
func TestRunAutoAndRecordedLayout(t *testing.T) {
	t.Parallel()
	cat := newCatalog(t)
	generateSmall(t, cat, "b.pings", 3000, 12)
	tbl, err := icebergtable.Open(t.Context(), cat, "b.pings")
	require.NoError(t, err)
	_, err = alter.Apply(t.Context(), tbl, alter.Request{Curve: "hilbert"})
	require.NoError(t, err)
	layouts, err := ParseLayouts("binpack,auto")
	require.NoError(t, err)
	rep, err := Run(t.Context(), cat, Config{Table: "b.pings", Layouts: layouts, Keep: true,
		WindowConfig: WindowConfig{Count: 20, Seed: 1}, Options: map[string]string{engine.OptTargetFileSize: "20000"}})
	require.NoError(t, err)
	require.Len(t, rep.Layouts, 2)
	scratch, err := catalogs.LoadTable(t.Context(), cat, rep.Layouts[1].ScratchTable)
	require.NoError(t, err)
	sum := scratch.CurrentSnapshot().Summary.Properties
	assert.True(t, strings.HasPrefix(sum[table.SummarySortOrder], "auto: "), sum[table.SummarySortOrder])
	assert.Contains(t, sum[engine.SummaryAuto], `"estimates":[`)
	assert.Equal(t, rep.Rows, rep.Layouts[1].Rows)
	// The report (bench --json) names what auto chose, as the commit does.
	require.NotEmpty(t, rep.Layouts[1].Auto)
	assert.Contains(t, sum[table.SummarySortOrder], rep.Layouts[1].Auto[0].Curve)
	out, err := json.Marshal(rep.Layouts[1])
	require.NoError(t, err)
	assert.Contains(t, string(out), `"auto":[{"group":1`)
	assert.Empty(t, rep.Layouts[0].Auto, "binpack chose nothing")
}
