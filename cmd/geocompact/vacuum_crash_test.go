package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/delta"
)

// envVacuumStopAfter makes a child geocompact (see envAsCLI) stop after
// deleting that many files, announce it on stderr and wait there, so a test
// can kill a vacuum at a known point between two deletions.
const envVacuumStopAfter = "GEOCOMPACT_TEST_VACUUM_STOP_AFTER"

// vacuumStopped is the line a stopped child writes to stderr.
const vacuumStopped = "vacuum stopped for the test after deletion"

func init() {
	n, err := strconv.Atoi(os.Getenv(envVacuumStopAfter))
	if err != nil || n <= 0 {
		return
	}
	deleted := 0
	vacuumDeleted = func(delta.FileInfo) {
		deleted++
		if deleted == n {
			fmt.Fprintf(os.Stderr, "%s %d\n", vacuumStopped, n)
			time.Sleep(time.Hour) // until killed
		}
	}
}

// deltaContent is every row the Delta table at dir reads, each as its
// values joined by tabs, sorted.
func deltaContent(t *testing.T, dir string) []string {
	t.Helper()
	tbl, err := delta.OpenLocal(dir)
	require.NoError(t, err)
	s, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	var rows []string
	require.NoError(t, tbl.Read(t.Context(), s, delta.ReadOptions{}, func(_ *delta.Add, rec arrow.RecordBatch) error {
		for i := range int(rec.NumRows()) {
			vals := make([]string, rec.NumCols())
			for j, col := range rec.Columns() {
				vals[j] = col.ValueStr(i)
			}
			rows = append(rows, strings.Join(vals, "\t"))
		}
		return nil
	}))
	slices.Sort(rows)
	return rows
}

// TestVacuumSurvivesSIGKILL kills a real vacuum, in a child process, after
// three of the seven deletions it planned: the table still reads every
// current row, and a second vacuum deletes the other four.
func TestVacuumSurvivesSIGKILL(t *testing.T) {
	dir := copyDeltaTable(t, "basic-with-inserts-deletes-checkpoint", 30*24*time.Hour)
	want := deltaContent(t, dir)
	require.NotEmpty(t, want)
	require.Len(t, parquetNames(t, dir), 14)

	cmd := childCLI(t.Context(), "vacuum", "--delta", dir)
	cmd.Env = append(cmd.Env, envVacuumStopAfter+"=3")
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	stopped := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), vacuumStopped) {
				stopped <- sc.Text()
				return
			}
		}
		close(stopped)
	}()
	select {
	case line, ok := <-stopped:
		require.True(t, ok, "the child vacuum exited without stopping")
		assert.Equal(t, vacuumStopped+" 3", line)
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		t.Fatal("the child vacuum did not reach its third deletion within a minute")
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	err = cmd.Wait()
	require.Error(t, err, "the child was killed, not finished")

	assert.Len(t, parquetNames(t, dir), 11, "three of the seven files went before the kill")
	assert.Equal(t, want, deltaContent(t, dir), "the killed vacuum left every current row readable")

	r := runChild(t, "--json", "vacuum", "--delta", dir)
	require.Equal(t, exitOK, r.Code, r.Stderr)
	var res delta.VacuumResult
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &res))
	assert.Equal(t, 4, res.DeletedCount, "the second vacuum deletes the rest")
	assert.Len(t, parquetNames(t, dir), 7)
	assert.Equal(t, want, deltaContent(t, dir))
}
