package engine_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/table"
)

// TestResultJSON: a Delta table's result names its commits versions and
// decodes back to itself; an Iceberg table's names them snapshots and has
// no format key.
func TestResultJSON(t *testing.T) {
	res := engine.Result{Format: table.FormatDelta, RewrittenDataFilesCount: 3, SnapshotsCommitted: 2, SnapshotIDs: []int64{5, 6}, Strategy: "sort", Verified: true}
	b, err := json.Marshal(res)
	require.NoError(t, err)
	s := string(b)
	assert.Contains(t, s, `"format":"delta"`)
	assert.Contains(t, s, `"versions_committed":2`)
	assert.Contains(t, s, `"versions":[5,6]`)
	assert.Contains(t, s, `"rewritten_data_files_count":3`)
	assert.NotContains(t, s, "snapshot")
	var back engine.Result
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, res, back)

	res.Format = ""
	b, err = json.Marshal(res)
	require.NoError(t, err)
	s = string(b)
	assert.Contains(t, s, `"snapshots_committed":2,"snapshot_ids":[5,6],"strategy":"sort"`, "in the field order of Result")
	assert.NotContains(t, s, "version")
	assert.NotContains(t, s, "format")
	back = engine.Result{}
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, res, back)

	// A Delta result that committed nothing says so, and lists no versions.
	b, err = json.Marshal(engine.Result{Format: table.FormatDelta})
	require.NoError(t, err)
	assert.Contains(t, string(b), `"versions_committed":0`)
	assert.NotContains(t, string(b), `"versions":`)
}
