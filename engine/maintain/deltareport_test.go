package maintain_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/engine/maintain"
)

// TestReportJSONNamesDeltaVersions: a Delta table's report encodes its
// version figures as versions and decodes back to the same report; an
// Iceberg table's keeps its snapshot names and has no format key.
func TestReportJSONNamesDeltaVersions(t *testing.T) {
	met := func(n int) *maintain.TableMetrics {
		return &maintain.TableMetrics{FileCount: 3, SnapshotCount: n, OldestSnapshotAgeSeconds: 60, CurrentSnapshotAgeSeconds: 5,
			Partitions: []maintain.PartitionMetrics{}}
	}
	for _, tc := range []struct {
		name, format string
		want, never  []string
	}{
		{"delta", maintain.FormatDelta,
			[]string{`"format":"delta"`, `"version_count":7`, `"oldest_version_age_seconds":60`, `"current_version_age_seconds":5`, `"version_count":8`},
			[]string{"snapshot_count", "snapshot_age"}},
		{"iceberg", "",
			[]string{`"snapshot_count":7`, `"oldest_snapshot_age_seconds":60`, `"current_snapshot_age_seconds":5`, `"snapshot_count":8`},
			[]string{"version_count", "version_age", `"format"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := &maintain.Report{Table: "t", Format: tc.format, Steps: []maintain.StepReport{{Step: "measure", Status: maintain.StepDone}},
				Before: met(7), After: met(8), Gate: maintain.GateDecision{Fired: []string{}, Partitions: []string{}}}
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
			assert.Equal(t, rep, &back)
		})
	}
}

// TestReportJSONWithoutAfter: a Delta report stopped before its last
// measure encodes no after figures, as an Iceberg one does.
func TestReportJSONWithoutAfter(t *testing.T) {
	b, err := json.Marshal(maintain.Report{Format: maintain.FormatDelta, Before: &maintain.TableMetrics{SnapshotCount: 2}})
	require.NoError(t, err)
	assert.NotContains(t, string(b), `"after"`)
	var back maintain.Report
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Nil(t, back.After)
	assert.Equal(t, 2, back.Before.SnapshotCount)
}
