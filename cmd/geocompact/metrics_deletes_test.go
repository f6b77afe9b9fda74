package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMetricsDeleteDebt reports the deletion vectors of a golden Delta
// table per partition in every output format, and none once they are
// purged.
func TestMetricsDeleteDebt(t *testing.T) {
	t.Parallel()
	dir := copyDeltaTable(t, "dv-partitioned-with-checkpoint", time.Hour)
	dv, _ := deltaFiles(t, dir)

	r := runCLI(t, "", false, "--json", "metrics", "--delta", dir)
	require.Equal(t, exitOK, r.Code, r.Stderr)
	var m struct {
		Records int64 `json:"total_records"`
		Deletes *struct {
			Vectors  int64   `json:"deletion_vectors"`
			Deleted  int64   `json:"deleted_records"`
			Bytes    int64   `json:"delete_bytes"`
			Fraction float64 `json:"deleted_fraction"`
		} `json:"deletes"`
		Partitions []struct {
			Partition string `json:"partition"`
			Deletes   *struct {
				Vectors int64 `json:"deletion_vectors"`
			} `json:"deletes"`
		} `json:"partitions"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &m), r.Stdout)
	require.NotNil(t, m.Deletes, r.Stdout)
	assert.Equal(t, int64(len(dv)), m.Deletes.Vectors)
	assert.Positive(t, m.Deletes.Deleted)
	assert.Positive(t, m.Deletes.Bytes)
	assert.InDelta(t, float64(m.Deletes.Deleted)/float64(m.Records), m.Deletes.Fraction, 1e-12)
	var withDV int
	for _, p := range m.Partitions {
		if p.Deletes != nil {
			withDV++
			assert.Positive(t, p.Deletes.Vectors, p.Partition)
		}
	}
	assert.Equal(t, len(dv), withDV, "the golden table's vectors lie in partitions of their own")

	r = runCLI(t, "", false, "metrics", "--delta", dir, "--format", "prometheus")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	assert.Equal(t, len(dv), strings.Count(r.Stdout, "\ngeocompact_table_partition_deletion_vectors{"), r.Stdout)
	assert.Contains(t, r.Stdout, "# TYPE geocompact_table_partition_deleted_fraction gauge")

	r = runCLI(t, "", false, "metrics", "--delta", dir)
	require.Equal(t, exitOK, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "DELETES")
	assert.Contains(t, r.Stdout, "(table)")

	r = runCLI(t, "", false, "rewrite", "--delta", dir, "--purge-deletion-vectors")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	r = runCLI(t, "", false, "--json", "metrics", "--delta", dir)
	require.Equal(t, exitOK, r.Code, r.Stderr)
	assert.NotContains(t, r.Stdout, `"deletes"`, "no debt after the purge")
	r = runCLI(t, "", false, "metrics", "--delta", dir, "--format", "prometheus")
	assert.NotContains(t, r.Stdout, "partition_deletion_vectors", "families without figures are left out")
}
