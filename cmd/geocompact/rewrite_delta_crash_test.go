package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/delta/deltatest"
)

// deltaCrashVariants are the Delta rewrites the crash test kills: every one
// rewrites all files, on a table with a deletion vector on one file.
var deltaCrashVariants = []struct {
	name        string
	partitioned bool
	args        []string
}{
	{"binpack", false, []string{"--strategy", "binpack"}},
	{"binpack-partitioned", true, []string{"--strategy", "binpack"}},
	{"hilbert-partitioned", true, []string{"--curve", "hilbert"}},
	{"hilbert-spilled", false, []string{"--curve", "hilbert", "--option", "max-group-memory-bytes=256KiB"}},
}

// Shape of the crash table: files of random points, in three partitions
// when partitioned.
const (
	deltaCrashFiles   = 36
	deltaCrashRowsPer = 400
)

// buildCrashDelta creates at dir a Delta table of deltaCrashFiles small
// files committed four to a version, with a deletion vector on one file,
// and returns the add actions of its data files as first written. The
// partitioned table uses column mapping by name; the other one is
// upgraded to deletion vectors alone.
func buildCrashDelta(t *testing.T, dir string, partitioned bool, seed uint64) []*delta.Add {
	t.Helper()
	var tbl *delta.Table
	if partitioned {
		tbl = deltatest.Create(t, dir, deltatest.Options{Partitioned: true, ColumnMapping: "name"})
	} else {
		tbl = deltatest.Create(t, dir, deltatest.Options{})
		require.NoError(t, delta.Commit(t.Context(), tbl, 1, []delta.Action{
			delta.NewCommitInfo("UPGRADE PROTOCOL", nil, 0, nil),
			{Protocol: &delta.Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
				ReaderFeatures: []string{"deletionVectors"}, WriterFeatures: []string{"deletionVectors"}}}}))
	}
	rng := rand.New(rand.NewPCG(seed, 11))
	var adds []*delta.Add
	for i := range deltaCrashFiles {
		rows := make([]deltatest.Row, deltaCrashRowsPer)
		for r := range rows {
			rows[r] = deltatest.Point(t, rng.Float64()*360-180, rng.Float64()*180-90)
		}
		adds = append(adds, deltatest.WriteFile(t, tbl, fmt.Sprintf("in-%02d.parquet", i), fmt.Sprintf("p%d", i%3),
			int64(i*deltaCrashRowsPer), rows...))
		if len(adds)%4 == 0 {
			deltatest.Append(t, tbl, adds[len(adds)-4:]...)
		}
	}
	deltatest.DeleteRows(t, tbl, adds[5], 0, 3, 99, deltaCrashRowsPer-1)
	return adds
}

// deltaCrashState is what a killed rewrite is checked against: the
// table as built and the OPTIMIZE the calibration run committed.
type deltaCrashState struct {
	rows     []string        // every live row, sorted
	version  int64           // the latest version as built
	files    map[string]bool // every file under the table but its log, as built
	removes  []string        // the paths the calibration OPTIMIZE removed, sorted
	addCount int             // and how many files it added
}

// TestRewriteDeltaSurvivesSIGKILL runs rewrite --delta (binpack and
// hilbert, partitioned and not, one sort spilled to disk) as a child
// process and SIGKILLs it after a seeded random delay spread over a
// calibration run. After every kill the table reads exactly its original
// rows, its latest version is the original one or one complete OPTIMIZE,
// a forced zero-retention vacuum deletes every file the table does not
// reference (what the killed run wrote and, once committed, what it
// replaced) and nothing else, and a rerun succeeds with the same rows.
// GEOCOMPACT_LONG=1 kills 10 times per variant; otherwise once.
func TestRewriteDeltaSurvivesSIGKILL(t *testing.T) {
	kills, seed, rng := crashSchedule(t, 10)
	counts := map[crashOutcome]int{}
	for _, v := range deltaCrashVariants {
		t.Run(v.name, func(t *testing.T) {
			root := t.TempDir()
			dir, pristine := filepath.Join(root, "table"), filepath.Join(root, "pristine")
			buildCrashDelta(t, dir, v.partitioned, seed)
			copyTree(t, dir, pristine)
			st := deltaCrashState{rows: deltaContent(t, dir), version: latestVersion(t, dir), files: tableFiles(t, dir)}
			require.Len(t, st.rows, deltaCrashFiles*deltaCrashRowsPer-4, "the deletion vector hides four rows")

			args := append([]string{"--config", noConfig(t), "rewrite", "--delta", dir, "--option", "rewrite-all=true"}, v.args...)
			took := calibrateDeltaCrash(t, dir, args, &st)
			killLoop(rng, kills, took, func(i int, delay time.Duration) bool {
				restoreTree(t, pristine, dir)
				out := killAfter(t, delay, args...)
				if out != finishedBeforeKill {
					out = checkDeltaAfterCrash(t, dir, st)
				} else {
					checkDeltaAfterCrash(t, dir, st)
				}
				counts[out]++
				t.Logf("attempt %d after %v: %s", i, delay.Round(time.Millisecond), out)
				r := runChild(t, args...)
				require.Equal(t, exitOK, r.Code, "rerun after attempt %d: %s", i, r.Stderr)
				assert.Equal(t, st.rows, deltaContent(t, dir), "rerun after attempt %d", i)
				assert.Equal(t, "OPTIMIZE", commitOperation(t, dir, latestVersion(t, dir)))
				return out != finishedBeforeKill
			})
		})
	}
	t.Logf("SUMMARY outcomes %v, rows checked per run: %d", counts, deltaCrashFiles*deltaCrashRowsPer-4)
}

// crashSchedule sets up a kill test: kills per variant (one, or
// longKills with GEOCOMPACT_LONG=1), the seed (GEOCOMPACT_CRASH_SEED,
// default 1) and a random source drawn from it.
func crashSchedule(t *testing.T, longKills int) (kills int, seed uint64, rng *rand.Rand) {
	t.Helper()
	kills, seed = 1, 1
	if longRun() {
		kills = longKills
	}
	if s := os.Getenv("GEOCOMPACT_CRASH_SEED"); s != "" {
		var err error
		seed, err = strconv.ParseUint(s, 10, 64)
		require.NoError(t, err, "GEOCOMPACT_CRASH_SEED")
	}
	t.Logf("seed %d (GEOCOMPACT_CRASH_SEED), %d kills per variant", seed, kills)
	return kills, seed, rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
}

// killLoop calls attempt with delays spread over took, a calibration
// run's duration, until it reports kills kills, up to 2*kills attempts.
// Attempt i of the first kills waits in its own slice of [0, took)
// (stratified); later ones, retrying runs that finished before their
// signal, aim at 40-90% of took, where writing and committing happen.
func killLoop(rng *rand.Rand, kills int, took time.Duration, attempt func(i int, delay time.Duration) (killed bool)) {
	for i, killed := 0, 0; killed < kills && i < 2*kills; i++ {
		frac := (float64(i) + rng.Float64()) / float64(kills)
		if i >= kills {
			frac = 0.4 + 0.5*rng.Float64()
		}
		if attempt(i, time.Duration(frac*float64(took))) {
			killed++
		}
	}
}

// calibrateDeltaCrash runs the rewrite to completion on the table at dir,
// records its OPTIMIZE in st and returns how long it took.
func calibrateDeltaCrash(t *testing.T, dir string, args []string, st *deltaCrashState) time.Duration {
	t.Helper()
	start := time.Now()
	r := runChild(t, append(args, "--json")...)
	took := time.Since(start)
	require.Equal(t, exitOK, r.Code, "calibration rewrite: %s", r.Stderr)
	var res struct {
		Rewritten int `json:"rewritten_data_files_count"`
		Added     int `json:"added_data_files_count"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &res), r.Stdout)
	require.Equal(t, deltaCrashFiles, res.Rewritten)
	require.Equal(t, st.version+1, latestVersion(t, dir))
	removes, adds := optimizeActions(t, dir, st.version+1)
	require.Len(t, adds, res.Added)
	st.removes, st.addCount = removes, len(adds)
	require.Equal(t, st.rows, deltaContent(t, dir))
	t.Logf("calibration: %v, %d files into %d", took.Round(time.Millisecond), res.Rewritten, res.Added)
	return took
}

// checkDeltaAfterCrash checks the table a killed rewrite left at dir and
// says where the kill landed: the rows are the original ones; the latest
// version is the original or one complete OPTIMIZE; every file the
// snapshot references is there and every other file was written by the
// run or replaced by its commit; a forced zero-retention vacuum deletes
// exactly those, and the rows stay the same.
func checkDeltaAfterCrash(t *testing.T, dir string, st deltaCrashState) crashOutcome {
	t.Helper()
	require.Equal(t, st.rows, deltaContent(t, dir), "the table reads its original rows")
	v := latestVersion(t, dir)
	committed := v == st.version+1
	if committed {
		removes, adds := optimizeActions(t, dir, v)
		assert.Equal(t, st.removes, removes, "the OPTIMIZE removes every planned file")
		assert.Len(t, adds, st.addCount, "the OPTIMIZE adds every written file")
	} else {
		require.Equal(t, st.version, v, "the latest version is the original or one OPTIMIZE")
	}
	ref := referencedFiles(t, dir)
	files := tableFiles(t, dir)
	var written []string
	for p := range ref {
		require.True(t, files[p], "the snapshot references %s, which is missing", p)
	}
	for p := range files {
		switch {
		case ref[p]:
		case st.files[p]:
			require.True(t, committed, "%s, an original file, is unreferenced without a commit", p)
		default:
			written = append(written, p)
		}
	}

	vacuumAfterKill(t, dir)
	assert.Equal(t, ref, tableFiles(t, dir), "vacuum leaves exactly the referenced files")
	require.Equal(t, st.rows, deltaContent(t, dir), "the table reads its original rows after vacuum")
	switch {
	case committed:
		return killedAfterCommit
	case len(written) == 0:
		return killedBeforeWriting
	}
	return killedBeforeCommit
}

// vacuumAfterKill ages every file under the Delta table at dir past
// delta.MinTempFileAge, so the killed run's temporary files count as a
// killed writer's, and vacuums it with a forced zero retention: it must
// delete every unreferenced file and leave no temporary file in the log.
func vacuumAfterKill(t *testing.T, dir string) {
	t.Helper()
	backdate(t, dir, 2*delta.MinTempFileAge)
	r := runChild(t, "vacuum", "--delta", dir, "--retain", "0h", "--force")
	require.Equal(t, exitOK, r.Code, "vacuum after the kill: %s", r.Stderr)
	hidden, err := filepath.Glob(filepath.Join(dir, delta.LogDir, ".*"))
	require.NoError(t, err)
	assert.Empty(t, hidden, "vacuum deletes the temporary log files of the killed run")
}

// latestVersion is the latest version of the Delta table at dir.
func latestVersion(t *testing.T, dir string) int64 {
	t.Helper()
	tbl, err := delta.OpenLocal(dir)
	require.NoError(t, err)
	return deltatest.Snapshot(t, tbl).Version
}

// commitActions parses version v of the Delta table at dir; a torn or
// unparsable commit fails the test.
func commitActions(t *testing.T, dir string, v int64) []delta.Action {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(delta.CommitPath(v))))
	require.NoError(t, err)
	acts, err := delta.ParseActions(b)
	require.NoError(t, err, "version %d parses", v)
	return acts
}

// commitOperation is the commitInfo operation of version v.
func commitOperation(t *testing.T, dir string, v int64) string {
	t.Helper()
	for _, a := range commitActions(t, dir, v) {
		if a.CommitInfo != nil {
			return a.CommitInfo.Operation
		}
	}
	return ""
}

// optimizeActions checks that version v is an OPTIMIZE whose actions all
// preserve data and returns the paths it removes, sorted, and its adds.
func optimizeActions(t *testing.T, dir string, v int64) ([]string, []*delta.Add) {
	t.Helper()
	require.Equal(t, "OPTIMIZE", commitOperation(t, dir, v), "version %d", v)
	var removes []string
	var adds []*delta.Add
	for _, a := range commitActions(t, dir, v) {
		switch {
		case a.Remove != nil:
			assert.False(t, a.Remove.DataChange, a.Remove.Path)
			removes = append(removes, decoded(t, a.Remove.Path))
		case a.Add != nil:
			assert.False(t, a.Add.DataChange, a.Add.Path)
			adds = append(adds, a.Add)
		}
	}
	slices.Sort(removes)
	return removes, adds
}

func decoded(t *testing.T, p string) string {
	t.Helper()
	a := &delta.Add{Path: p}
	d, err := a.DecodedPath()
	require.NoError(t, err)
	return d
}

// referencedFiles is the set of files the latest snapshot of the table
// at dir reads (its deletion vectors are inline).
func referencedFiles(t *testing.T, dir string) map[string]bool {
	t.Helper()
	tbl, err := delta.OpenLocal(dir)
	require.NoError(t, err)
	ref := map[string]bool{}
	for _, a := range deltatest.Snapshot(t, tbl).Files {
		ref[decoded(t, a.Path)] = true
	}
	return ref
}

// tableFiles is every file under the table directory dir outside its
// _delta_log, hidden ones included, as slash-separated relative paths.
func tableFiles(t *testing.T, dir string) map[string]bool {
	t.Helper()
	files := map[string]bool{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		switch {
		case d.IsDir() && rel == delta.LogDir:
			return filepath.SkipDir
		case !d.IsDir():
			files[rel] = true
		}
		return nil
	}))
	return files
}
