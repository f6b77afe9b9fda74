package delta

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestVacuumTombstoneWithoutTimestamp vacuums a file whose remove action
// carries no deletionTimestamp (optional in the protocol, and read as 0
// by Delta's own reader): the tombstone is past any retention, so the
// file goes, while a file removed with a timestamp inside the window
// stays.
func TestVacuumTombstoneWithoutTimestamp(t *testing.T) {
	tbl := newTestTable(t, "none", nil)
	s := snap(t, tbl)
	appendFiles(t, tbl, writeFile(t, tbl, s, 1, 0, 10), writeFile(t, tbl, s, 1, 10, 20), writeFile(t, tbl, s, 1, 20, 30))
	now := time.Now()
	recent := now.Add(90 * time.Minute).UnixMilli() // inside the window below
	s = snap(t, tbl)
	require.NoError(t, Commit(t.Context(), tbl, s.Version+1, []Action{
		{Remove: &Remove{Path: "part=1/f-0-10.parquet", DataChange: true}},
		{Remove: &Remove{Path: "part=1/f-10-20.parquet", DataChange: true, DeletionTimestamp: &recent}}}))

	plan, err := tbl.PlanVacuum(t.Context(), VacuumConfig{Retain: time.Hour, Force: true, Now: now.Add(2 * time.Hour)})
	require.NoError(t, err)
	var names []string
	for _, f := range plan.Files {
		names = append(names, f.Path)
	}
	assert.Equal(t, []string{"part=1/f-0-10.parquet"}, names)
}

// TestVacuumDeletesTempFilesOfKilledWriters vacuums a data file a killed
// writer left half written under its temporary name: it is deleted once
// past the retention, as any unreferenced file, while other hidden files
// and anything under _delta_log stay.
func TestVacuumDeletesTempFilesOfKilledWriters(t *testing.T) {
	tbl := newTestTable(t, "none", nil)
	w, err := tbl.Store.Create(t.Context(), "part=1/part-00000-killed.parquet")
	require.NoError(t, err)
	_, err = w.Write([]byte("PAR1"))
	require.NoError(t, err) // never closed: the writer was killed
	root := tbl.Store.(*LocalStorage).Root
	for _, p := range []string{"part=1/.hidden.crc", "_delta_log/.00000000000000000001.json.tmp-1"} {
		require.NoError(t, os.WriteFile(filepath.Join(root, filepath.FromSlash(p)), []byte("x"), 0o644))
	}
	all, err := tbl.Store.List(t.Context(), "part=1", false)
	require.NoError(t, err)
	require.Len(t, all, 2)

	plan, err := tbl.PlanVacuum(t.Context(), VacuumConfig{Retain: time.Hour, Force: true, Now: time.Now().Add(2 * time.Hour)})
	require.NoError(t, err)
	require.Len(t, plan.Files, 1)
	assert.Regexp(t, `^part=1/\.part-00000-killed\.parquet\.tmp-\d+$`, plan.Files[0].Path)
}
