package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/internal/testing/testenv"
)

// morWarehouse generates a merge-on-read table in a fresh warehouse and
// deletes rows from it in several commits, each leaving position delete
// files.
func morWarehouse(t *testing.T) (string, *table.Table) {
	t.Helper()
	return morWarehouseN(t, 5)
}

// morWarehouseN is morWarehouse with n deletes of 20 rows each, 300 rows
// apart, in a table of 400 n rows.
func morWarehouseN(t *testing.T, n int64) (string, *table.Table) {
	t.Helper()
	wh := t.TempDir()
	cat := openWarehouse(t, wh)
	_, err := bench.Generate(t.Context(), cat, bench.GenerateConfig{Table: "d.t", Rows: 400 * n, Commits: 3, Seed: 3,
		PartitionBy: "bucket(2, device_id)", Properties: map[string]string{table.WriteDeleteModeKey: table.WriteModeMergeOnRead}})
	require.NoError(t, err)
	for lo := int64(0); lo < 300*n; lo += 300 {
		_, err := loadTable(t, cat, "d.t").Delete(t.Context(), iceberg.NewAnd(
			iceberg.GreaterThanEqual(iceberg.Reference("id"), lo), iceberg.LessThan(iceberg.Reference("id"), lo+20)), nil)
		require.NoError(t, err)
	}
	return wh, loadTable(t, cat, "d.t")
}

func TestRewriteDeletesCommand(t *testing.T) {
	t.Parallel()
	wh, tbl := morWarehouse(t)
	before := digest(t, tbl)
	snap := tbl.CurrentSnapshot().SnapshotID

	r := runCLI(t, wh, false, "--json", "rewrite-deletes", "--table", "d.t", "--dry-run")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	var dry struct {
		Rewritten int  `json:"rewritten_delete_files_count"`
		DryRun    bool `json:"dry_run"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &dry), r.Stdout)
	assert.True(t, dry.DryRun)
	assert.Positive(t, dry.Rewritten, "five deletes leave five files per partition: min-input-files is met")
	assert.Equal(t, snap, loadTable(t, openWarehouse(t, wh), "d.t").CurrentSnapshot().SnapshotID)

	r = runCLI(t, wh, false, "rewrite-deletes", "--table", "d.t")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "REWRITTEN DELETE FILES")
	after := loadTable(t, openWarehouse(t, wh), "d.t")
	assert.Equal(t, table.OpReplace, after.CurrentSnapshot().Summary.Operation)
	props := after.CurrentSnapshot().Summary.Properties
	assert.Equal(t, "2", props["total-delete-files"], "one file per partition")
	assert.Equal(t, "10", props["removed-position-delete-files"])
	assert.Equal(t, "100", props["total-position-deletes"])
	got := digest(t, after)
	assert.Equal(t, before.Rows, got.Rows)
	assert.Equal(t, before.IDs, got.IDs, "no deleted row is back")

	r = runCLI(t, wh, false, "rewrite-deletes", "--table", "d.t")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "nothing rewritten")
}

func TestRewriteDeletesRefusals(t *testing.T) {
	t.Parallel()
	wh, tbl := morWarehouse(t)
	snap := tbl.CurrentSnapshot().SnapshotID
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--option", "min-input-file=2"}, exitUsage, `unknown option "min-input-file"`},
		{[]string{"--option", "max-concurrent-file-group-rewrites=0"}, exitUsage, "max-concurrent-file-group-rewrites"},
		{[]string{"--where", "nope > 1"}, exitError, "nope"},
		{[]string{"--table", "d.missing"}, exitError, "d.missing"},
	} {
		args := append([]string{"rewrite-deletes"}, tc.args...)
		if !strings.Contains(strings.Join(tc.args, " "), "--table") {
			args = append(args, "--table", "d.t")
		}
		r := runCLI(t, wh, false, args...)
		assert.Equal(t, tc.code, r.Code, "%v: %s", tc.args, r.Stderr)
		assert.Contains(t, r.Stderr, tc.want, tc.args)
	}
	assert.Equal(t, snap, loadTable(t, openWarehouse(t, wh), "d.t").CurrentSnapshot().SnapshotID, "nothing committed")
}

// TestDeletesRacingRewriteDeletes races merge-on-read deletes of single
// rows against repeated rewrite-deletes runs: a deleted row must never
// come back, and every run either commits or exits 4. The race runs five
// seconds at full speed, then, until a rewrite has committed (at most a
// minute; under load every run may lose its retries to the deleter), with
// the deleter pausing between deletes, so that a commit lands between
// them.
func TestDeletesRacingRewriteDeletes(t *testing.T) {
	if testing.Short() {
		t.Skip("racing deletes run for seconds; skipped with -short")
	}
	t.Parallel()
	spec := testenv.Catalogs(t)[0].Spec(t)
	cat := testenv.OpenSpec(t, spec)
	flags := append([]string{"--config", noConfig(t)}, testenv.GlobalFlags(t, spec)...)
	const name, initial = "race.dels", 2000
	_, err := bench.Generate(t.Context(), cat, bench.GenerateConfig{Table: name, Rows: initial, Commits: 4, Seed: 5,
		PartitionBy: "bucket(2, device_id)", Properties: map[string]string{
			table.WriteDeleteModeKey: table.WriteModeMergeOnRead, table.CommitMaxRetryWaitMsKey: "500"}})
	require.NoError(t, err)
	st := &raceStats{deleted: map[int64]bool{}}
	deadline, giveUp := time.Now().Add(5*time.Second), time.Now().Add(time.Minute)
	racing := func() bool {
		st.mu.Lock()
		defer st.mu.Unlock()
		now := time.Now()
		return now.Before(deadline) || st.rewrites == 0 && now.Before(giveUp)
	}
	pace := func() {
		if time.Now().After(deadline) {
			time.Sleep(300 * time.Millisecond)
		}
	}
	var wg sync.WaitGroup
	wg.Go(func() { deleteLoop(t, cat, name, initial, racing, pace, st) })
	runs := 0
	wg.Go(func() {
		for racing() {
			r := runChild(t, append(flags, "rewrite-deletes", "--table", name, "--option", "rewrite-all=true")...)
			st.mu.Lock()
			runs++
			switch r.Code {
			case exitOK:
				st.rewrites++
			case exitConflict:
				st.rewriteConflicts++
				if st.rewriteConflicts == 1 {
					t.Logf("first conflict: %s", strings.TrimSpace(r.Stderr))
				}
			default:
				st.otherErrors = append(st.otherErrors, fmt.Sprintf("rewrite-deletes exit %d: %s", r.Code, strings.TrimSpace(r.Stderr)))
			}
			st.mu.Unlock()
		}
	})
	wg.Wait()
	t.Logf("deletes %d, rewrite-deletes runs %d (committed %d, exit 4: %d)", st.deletes, runs, st.rewrites, st.rewriteConflicts)
	for _, e := range st.otherErrors {
		t.Error(e)
	}
	require.Positive(t, st.deletes)
	require.Positive(t, st.rewrites)
	r := runChild(t, append(flags, "rewrite-deletes", "--table", name, "--option", "rewrite-all=true")...)
	require.Equal(t, exitOK, r.Code, r.Stderr)
	d := digest(t, loadTable(t, cat, name))
	for id := range int64(initial) {
		want := 1
		if st.deleted[id] {
			want = 0
		}
		if d.IDs[id] != want {
			t.Errorf("id %d is present %d times, want %d (deleted: %v)", id, d.IDs[id], want, st.deleted[id])
		}
	}
}

// TestRewritePositionDeleteFilesCall runs Iceberg's procedure from SQL:
// Spark's result row, the options by name, an unknown option refused
// before anything runs.
func TestRewritePositionDeleteFilesCall(t *testing.T) {
	t.Parallel()
	wh, tbl := morWarehouse(t)
	snap := tbl.CurrentSnapshot().SnapshotID

	r := runCLI(t, wh, false, "sql", "CALL system.rewrite_position_delete_files(table => 'd.t', options => map('min-input-file', '2'))")
	assert.Equal(t, exitUsage, r.Code, r.Stderr)
	assert.Contains(t, r.Stderr, `unknown option "min-input-file"`)
	r = runCLI(t, wh, false, "sql", "CALL system.rewrite_position_delete_files(table => 'd.t', stratgy => 'binpack')")
	assert.NotEqual(t, exitOK, r.Code)
	assert.Contains(t, r.Stderr, "stratgy")
	assert.Equal(t, snap, loadTable(t, openWarehouse(t, wh), "d.t").CurrentSnapshot().SnapshotID, "nothing committed")

	r = runCLI(t, wh, false, "--json", "sql", "CALL system.rewrite_position_delete_files(table => 'd.t', options => map('rewrite-all', 'true'), where => 'id >= 0')")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	lines := sqlLines(t, r.Stdout)
	require.Len(t, lines, 1)
	assert.Equal(t, []any{"rewritten_delete_files_count", "added_delete_files_count", "rewritten_bytes_count", "added_bytes_count"}, lines[0]["columns"])
	rows := lines[0]["rows"].([]any)
	require.Len(t, rows, 1)
	row := rows[0].(map[string]any)
	assert.Equal(t, 10.0, row["rewritten_delete_files_count"])
	assert.Equal(t, 2.0, row["added_delete_files_count"])
	assert.Positive(t, row["added_bytes_count"])
}
