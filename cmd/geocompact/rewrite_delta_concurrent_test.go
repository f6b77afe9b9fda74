package main

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/delta/deltatest"
)

// firstAppendedID is the first row id the concurrent appends write, above
// every id of the table as built.
const firstAppendedID = 1_000_000

// appendRows is how many rows each concurrent append writes.
const appendRows = 20

// TestRewriteDeltaKeepsConcurrentAppends runs rewrite --delta as a child
// process while this process appends files to the table in a loop, each
// append a blind WRITE commit retried on the next version when it loses
// the race. After both finish, every original row and every appended row
// is there exactly once, and the one OPTIMIZE commit removes exactly the
// files live at the version it read, never a file appended after it.
// Three rounds; GEOCOMPACT_LONG=1 runs twenty.
func TestRewriteDeltaKeepsConcurrentAppends(t *testing.T) {
	rounds := 3
	if longRun() {
		rounds = 20
	}
	root := t.TempDir()
	dir, pristine := filepath.Join(root, "table"), filepath.Join(root, "pristine")
	buildCrashDelta(t, dir, true, 5)
	copyTree(t, dir, pristine)
	want := deltaContent(t, dir)
	built := latestVersion(t, dir)

	raced := 0
	for round := range rounds {
		restoreTree(t, pristine, dir)
		ids := rewriteWhileAppending(t, dir)
		rows := deltaContent(t, dir)
		var orig, appended []string
		for _, r := range rows {
			id, err := strconv.ParseInt(strings.SplitN(r, "\t", 2)[0], 10, 64)
			require.NoError(t, err, r)
			if id >= firstAppendedID {
				appended = append(appended, strconv.FormatInt(id, 10))
			} else {
				orig = append(orig, r)
			}
		}
		slices.Sort(appended)
		require.Equal(t, want, orig, "round %d: the original rows, once each", round)
		require.Equal(t, ids, appended, "round %d: every appended row, once each", round)

		read, committed := checkOptimizeRemoves(t, dir, built)
		t.Logf("round %d: %d rows appended in %d files; OPTIMIZE read version %d, committed %d", round,
			len(ids), len(ids)/appendRows, read, committed)
		if committed > read+1 {
			raced++
		}
	}
	assert.Positive(t, raced, "in no round did an append land between the rewrite's read and its commit")
}

// rewriteWhileAppending runs a hilbert rewrite of the Delta table at dir
// in a child process and appends files to the table until it exits, then
// once more. It returns the ids appended, sorted as strings.
func rewriteWhileAppending(t *testing.T, dir string) []string {
	t.Helper()
	cmd := childCLI(t.Context(), "--config", noConfig(t), "rewrite", "--delta", dir, "--curve", "hilbert",
		"--option", "rewrite-all=true")
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	tbl, err := delta.OpenLocal(dir)
	require.NoError(t, err)
	var ids []string
	next := int64(firstAppendedID)
	appendOne := func() {
		k := len(ids) / appendRows
		rows := make([]deltatest.Row, appendRows)
		for i := range rows {
			rows[i] = deltatest.Point(t, float64(k%360)-180, float64(i))
			ids = append(ids, strconv.FormatInt(next+int64(i), 10))
		}
		add := deltatest.WriteFile(t, tbl, fmt.Sprintf("append-%04d.parquet", k), fmt.Sprintf("p%d", k%3), next, rows...)
		appendRetrying(t, tbl, add)
		next += appendRows
	}
	for running := true; running; {
		select {
		case err := <-done:
			require.NoError(t, err, "rewrite: %s", errOut.String())
			running = false
		default:
			appendOne()
		}
	}
	appendOne()
	slices.Sort(ids)
	return ids
}

// appendRetrying commits add as a blind append on the latest version,
// again on the next one whenever another writer took it first.
func appendRetrying(t *testing.T, tbl *delta.Table, add *delta.Add) {
	t.Helper()
	for {
		s := deltatest.Snapshot(t, tbl)
		err := delta.Commit(t.Context(), tbl, s.Version+1, []delta.Action{
			delta.NewCommitInfo("WRITE", map[string]any{"mode": "Append"}, s.Version, nil), {Add: add}})
		if !errors.As(err, new(*delta.VersionExistsError)) {
			require.NoError(t, err)
			return
		}
	}
}

// checkOptimizeRemoves finds the one OPTIMIZE committed after version
// built of the table at dir and checks that it removes exactly the files
// live at the version it read. It returns that version and its own.
func checkOptimizeRemoves(t *testing.T, dir string, built int64) (read, committed int64) {
	t.Helper()
	committed = -1
	for v := built + 1; v <= latestVersion(t, dir); v++ {
		for _, a := range commitActions(t, dir, v) {
			if a.CommitInfo != nil && a.CommitInfo.Operation == "OPTIMIZE" {
				require.Equal(t, int64(-1), committed, "a second OPTIMIZE at version %d", v)
				require.NotNil(t, a.CommitInfo.ReadVersion)
				committed, read = v, *a.CommitInfo.ReadVersion
			}
		}
	}
	require.NotEqual(t, int64(-1), committed, "no OPTIMIZE was committed")
	tbl, err := delta.OpenLocal(dir)
	require.NoError(t, err)
	s, err := tbl.SnapshotAt(t.Context(), read)
	require.NoError(t, err)
	var live []string
	for _, a := range s.Files {
		live = append(live, decoded(t, a.Path))
	}
	slices.Sort(live)
	removes, _ := optimizeActions(t, dir, committed)
	require.Equal(t, live, removes, "the OPTIMIZE removes the files live at the version it read, no others")
	return read, committed
}
