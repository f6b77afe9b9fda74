package maintain_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/maintain"
)

// TestReportJSONNamesDeltaVersions: a Delta table's report encodes its
// version figures and its rewrite's commits as versions, also when its
// metrics and rewrite were built without a format, and decodes back to the
// same report with the format on each; an Iceberg table's keeps its
// snapshot names and has no format key.
func TestReportJSONNamesDeltaVersions(t *testing.T) {
	t.Parallel()
	met := func(n int) *maintain.TableMetrics {
		return &maintain.TableMetrics{FileCount: 3, SnapshotCount: n, OldestSnapshotAgeSeconds: 60, CurrentSnapshotAgeSeconds: 5,
			Partitions: []maintain.PartitionMetrics{}}
	}
	for _, tc := range []struct {
		name, format string
		want, never  []string
	}{
		{"delta", maintain.FormatDelta,
			[]string{`"format":"delta"`, `"version_count":7`, `"oldest_version_age_seconds":60`, `"current_version_age_seconds":5`, `"version_count":8`,
				`"versions_committed":1`, `"versions":[8]`},
			[]string{"snapshot_count", "snapshot_age", "snapshots_committed", "snapshot_ids"}},
		{"iceberg", "",
			[]string{`"snapshot_count":7`, `"oldest_snapshot_age_seconds":60`, `"current_snapshot_age_seconds":5`, `"snapshot_count":8`,
				`"snapshots_committed":1`, `"snapshot_ids":[8]`},
			[]string{"version", `"format"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := &maintain.Report{Table: "t", Format: tc.format, Steps: []maintain.StepReport{{Step: "measure", Status: maintain.StepDone}},
				Before: met(7), After: met(8), Gate: maintain.GateDecision{Fired: []string{}, Partitions: []string{}},
				Rewrite: &engine.Result{SnapshotsCommitted: 1, SnapshotIDs: []int64{8}, Strategy: "sort"}}
			b, err := json.Marshal(rep)
			require.NoError(t, err)
			for _, w := range tc.want {
				assert.Contains(t, string(b), w)
			}
			for _, n := range tc.never {
				assert.NotContains(t, string(b), n)
			}
			var back maintain.Report
			require.NoError(t, json.Unmarshal(b, &back))
			rep.Before.Format, rep.After.Format, rep.Rewrite.Format = tc.format, tc.format, tc.format
			assert.Equal(t, rep, &back)
		})
	}
}

// TestTableMetricsJSON: a Delta table's metrics alone (metrics --delta)
// encode their version figures as versions with their format, and decode
// back; an Iceberg table's encode as before, without a format key.
func TestTableMetricsJSON(t *testing.T) {
	t.Parallel()
	m := maintain.TableMetrics{Format: maintain.FormatDelta, FileCount: 2, SnapshotCount: 4, CurrentSnapshotAgeSeconds: 1.5, Partitions: []maintain.PartitionMetrics{}}
	b, err := json.Marshal(m)
	require.NoError(t, err)
	assert.JSONEq(t, `{"format":"delta","file_count":2,"avg_file_bytes":0,"total_bytes":0,"total_records":0,"version_count":4,
		"oldest_version_age_seconds":0,"current_version_age_seconds":1.5,"manifest_count":0,"delete_file_count":0,"partitions":[]}`, string(b))
	var back maintain.TableMetrics
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, m, back)

	m.Format = ""
	b, err = json.Marshal(m)
	require.NoError(t, err)
	assert.JSONEq(t, `{"file_count":2,"avg_file_bytes":0,"total_bytes":0,"total_records":0,"snapshot_count":4,
		"oldest_snapshot_age_seconds":0,"current_snapshot_age_seconds":1.5,"manifest_count":0,"delete_file_count":0,"partitions":[]}`, string(b))
}

// TestReportJSONWithoutAfter: a Delta report stopped before its last
// measure encodes no after figures, as an Iceberg one does.
func TestReportJSONWithoutAfter(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal(maintain.Report{Format: maintain.FormatDelta, Before: &maintain.TableMetrics{SnapshotCount: 2}})
	require.NoError(t, err)
	assert.NotContains(t, string(b), `"after"`)
	var back maintain.Report
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Nil(t, back.After)
	assert.Equal(t, 2, back.Before.SnapshotCount)
}
