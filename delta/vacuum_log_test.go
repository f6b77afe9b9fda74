package delta_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/delta/deltatest"
)

// TestRecordVacuum: a recorded vacuum is a commitInfo-only version that
// LastVacuum finds, and it leaves the table's files and metadata as they
// were.
func TestRecordVacuum(t *testing.T) {
	tbl := deltatest.Create(t, t.TempDir(), deltatest.Options{})
	deltatest.Append(t, tbl, deltatest.WriteFile(t, tbl, "a.parquet", "", 0, deltatest.Point(t, 1, 2)))
	_, ok, err := tbl.LastVacuum(t.Context())
	require.NoError(t, err)
	assert.False(t, ok, "no vacuum recorded yet")

	before := deltatest.Snapshot(t, tbl)
	res, err := tbl.Vacuum(t.Context(), "t", delta.VacuumConfig{Retain: delta.TableRetention})
	require.NoError(t, err)
	v, err := tbl.RecordVacuum(t.Context(), res, 1)
	require.NoError(t, err)
	assert.Equal(t, before.Version+1, v)
	s := deltatest.Snapshot(t, tbl)
	assert.Equal(t, delta.OpVacuumEnd, s.CommitInfo.Operation)
	assert.Equal(t, before.Files, s.Files)
	assert.Equal(t, before.Metadata, s.Metadata)

	last, ok, err := tbl.LastVacuum(t.Context())
	require.NoError(t, err)
	require.True(t, ok)
	assert.WithinDuration(t, time.Now(), last, time.Minute)
}
