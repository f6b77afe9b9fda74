package delta

import (
	"os"
	"path/filepath"
	"slices"
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

// killedWriterLeftovers are the temporary files killed writers leave:
// of a data file, a commit, a checkpoint and _last_checkpoint.
var killedWriterLeftovers = []string{
	"part=1/.part-00000-killed.parquet.tmp-41",
	"_delta_log/.00000000000000000009.json.tmp-1234",
	"_delta_log/.00000000000000000010.checkpoint.parquet.tmp-77",
	"_delta_log/.00000000000000000010.checkpoint.0000000001.0000000002.parquet.tmp-78",
	"_delta_log/._last_checkpoint.tmp-5",
}

// vacuumNeverTouches are hidden files that look like leftovers but are
// not ours to delete, however old: committed log files, another writer's
// temporary file and files under hidden directories.
var vacuumNeverTouches = []string{
	"part=1/.hidden.crc",
	"_delta_log/00000000000000000000.json",
	"_delta_log/.00000000000000000009.json.3f2a.tmp",
	"_delta_log/.notes.txt.tmp-1",
	"_delta_log/_sidecars/.0a.parquet.tmp-1",
	"_staging/.part-1.parquet.tmp-1",
}

// writeAged writes each table-relative path under root, last modified at
// when (a path that exists is only aged).
func writeAged(t *testing.T, root string, when time.Time, paths ...string) {
	t.Helper()
	for _, p := range paths {
		full := filepath.Join(root, filepath.FromSlash(p))
		if _, err := os.Stat(full); err != nil {
			require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
			require.NoError(t, os.WriteFile(full, []byte("x"), 0o644))
		}
		require.NoError(t, os.Chtimes(full, when, when))
	}
}

func planPaths(plan *VacuumPlan) []string {
	names := []string{}
	for _, f := range plan.Files {
		names = append(names, f.Path)
	}
	slices.Sort(names)
	return names
}

// TestVacuumDeletesLeftoversOfKilledWriters: temporary files killed
// writers left (data, commit, checkpoint, _last_checkpoint) are deleted
// once older than the retention and MinTempFileAge, so even a forced zero
// retention keeps a fresh one a live writer may be writing; a dry run
// lists them and deletes nothing; committed log files, other writers'
// temporary files and hidden directories are never touched.
func TestVacuumDeletesLeftoversOfKilledWriters(t *testing.T) {
	tbl := newTestTable(t, "none", nil)
	s := snap(t, tbl)
	appendFiles(t, tbl, writeFile(t, tbl, s, 1, 0, 10))
	rows := ids(t, tbl)
	root := tbl.Store.(*LocalStorage).Root
	now := time.Now()
	old := now.Add(-2 * MinTempFileAge)
	writeAged(t, root, old, killedWriterLeftovers...)
	writeAged(t, root, old, vacuumNeverTouches...)
	fresh := "_delta_log/.00000000000000000002.json.tmp-99"
	writeAged(t, root, now.Add(-time.Minute), fresh)
	want := slices.Sorted(slices.Values(killedWriterLeftovers))

	plan, err := tbl.PlanVacuum(t.Context(), VacuumConfig{Retain: TableRetention, Now: now})
	require.NoError(t, err)
	assert.Empty(t, plan.Files, "the table's 7-day retention is the longer floor")

	res, err := tbl.Vacuum(t.Context(), "t", VacuumConfig{Retain: 0, Force: true, Now: now, DryRun: true})
	require.NoError(t, err)
	got := make([]string, 0, len(res.Files))
	for _, f := range res.Files {
		got = append(got, f.Path)
	}
	slices.Sort(got)
	assert.Equal(t, want, got, "a forced zero retention still keeps the fresh temporary file")
	assert.Equal(t, len(want), res.TempFiles)
	assert.Zero(t, res.DeletedCount)
	for _, p := range append(want, fresh) {
		assert.FileExists(t, filepath.Join(root, filepath.FromSlash(p)), "a dry run deletes nothing")
	}

	res, err = tbl.Vacuum(t.Context(), "t", VacuumConfig{Retain: 0, Force: true, Now: now})
	require.NoError(t, err)
	assert.Equal(t, len(want), res.DeletedCount)
	assert.Equal(t, len(want), res.TempFiles)
	for _, p := range want {
		assert.NoFileExists(t, filepath.Join(root, filepath.FromSlash(p)))
	}
	for _, p := range append(vacuumNeverTouches, fresh) {
		assert.FileExists(t, filepath.Join(root, filepath.FromSlash(p)))
	}
	assert.Equal(t, rows, ids(t, tbl), "the table reads the same")

	// Past the table's own retention, the fresh one goes too.
	plan, err = tbl.PlanVacuum(t.Context(), VacuumConfig{Retain: TableRetention, Now: now.Add(8 * 24 * time.Hour)})
	require.NoError(t, err)
	assert.Equal(t, []string{fresh}, planPaths(plan))
	assert.Equal(t, 1, plan.TempFiles)
}

// TestVacuumDeletesTempFileOfKilledDataWriter: a data file a killed
// writer left half written under LocalStorage's temporary name is
// planned, as the temporary file it is, once past MinTempFileAge.
func TestVacuumDeletesTempFileOfKilledDataWriter(t *testing.T) {
	tbl := newTestTable(t, "none", nil)
	w, err := tbl.Store.Create(t.Context(), "part=1/part-00000-killed.parquet")
	require.NoError(t, err)
	_, err = w.Write([]byte("PAR1"))
	require.NoError(t, err) // never closed: the writer was killed

	plan, err := tbl.PlanVacuum(t.Context(), VacuumConfig{Retain: 0, Force: true})
	require.NoError(t, err)
	assert.Empty(t, plan.Files, "a live writer may still be writing it")
	plan, err = tbl.PlanVacuum(t.Context(), VacuumConfig{Retain: 0, Force: true, Now: time.Now().Add(2 * MinTempFileAge)})
	require.NoError(t, err)
	require.Len(t, plan.Files, 1)
	assert.Regexp(t, `^part=1/\.part-00000-killed\.parquet\.tmp-\d+$`, plan.Files[0].Path)
	assert.Equal(t, 1, plan.TempFiles)
}
