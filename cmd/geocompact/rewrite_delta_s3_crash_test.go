package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/engine/verify"
	"github.com/geocompact/geocompact/internal/testing/reliability"
)

// s3CrashTable is a copy of the crash table on the S3 server that one
// attempt rewrites: its location, its storage, and the part of its object
// keys that tells its PUTs from the other copies'.
type s3CrashTable struct {
	loc      string
	store    delta.Storage
	key      string // "/PREFIX/NAME/", as in the PUT's URL path
	uploaded int    // the data files put to make the copy
}

// dataPut matches the PUT of one of the copy's data files.
func (c s3CrashTable) dataPut(p string) bool {
	return strings.Contains(p, c.key) && !strings.Contains(p, "/"+delta.LogDir+"/")
}

// wrote reports whether a rewrite of the copy put a data file.
func (c s3CrashTable) wrote(puts *putLog) bool { return puts.count(c.dataPut) > c.uploaded }

// commitPut is the suffix of the URL path of the PUT of version v.
func (c s3CrashTable) commitPut(v int64) string { return c.key + delta.CommitPath(v) }

// s3CrashState is what a killed rewrite on S3 is checked against: the
// table as built and the OPTIMIZE the calibration run committed.
type s3CrashState struct {
	rows     []string         // every live row, sorted
	digest   verify.Digest    // their checksum, bbox extent and count
	version  int64            // the latest version as built
	commits  map[int64][]byte // every commit as built, by version
	removes  []string         // the paths the calibration OPTIMIZE removed, sorted
	addCount int              // and how many files it added
}

// s3CrashArgs is the rewrite the S3 kill test kills.
func s3CrashArgs(t *testing.T, loc string) []string {
	return []string{"--config", noConfig(t), "rewrite", "--delta", loc, "--curve", "hilbert", "--option", "rewrite-all=true"}
}

// TestRewriteDeltaS3SurvivesSIGKILL runs rewrite --delta --curve hilbert
// of a partitioned Delta table with column mapping and a deletion vector
// on the loopback S3 server as a child process, and SIGKILLs it at seeded
// random points: half of the kills anywhere in a calibration run's
// duration, half in its writing and committing phase, timed from its first
// data file PUT. Each attempt rewrites a fresh copy of the table. After
// every kill the table reads its original rows with their original digest
// (checksum, extent, count), every version committed before is still
// there byte for byte, the latest version is the original one or one
// complete OPTIMIZE put with If-None-Match: *, and every file it
// references exists; a forced zero-retention vacuum leaves exactly those
// files. A rerun then completes with the same rows and digest as one more
// conditionally put OPTIMIZE, loses no version, the killed run's
// included, and leaves nothing in the temporary directory: what the
// killed run staged for upload or spilled is removed. GEOCOMPACT_LONG=1
// kills 10 times; otherwise once, in the writing phase.
func TestRewriteDeltaS3SurvivesSIGKILL(t *testing.T) {
	kills, seed, rng := crashSchedule(t, 10)
	srv := reliability.UseS3(t)
	puts, endpoint := newPutLog(t, srv.Endpoint)
	t.Setenv("AWS_ENDPOINT_URL_S3", endpoint)
	scratchRoot := t.TempDir() // where the children stage and spill
	t.Setenv("TMPDIR", scratchRoot)
	pristine := filepath.Join(t.TempDir(), "table")
	buildCrashDelta(t, pristine, true, seed)
	st := s3CrashState{rows: deltaContent(t, pristine), digest: deltaDigest(t, pristine), version: latestVersion(t, pristine),
		commits: commitFiles(t, pristine)}
	require.Equal(t, int64(len(st.rows)), st.digest.Rows)
	require.Len(t, st.commits, int(st.version)+1)
	upload := func(name string) s3CrashTable {
		tbl := uploadS3Table(t, pristine, srv.Bucket, srv.Prefix, name)
		tbl.uploaded = puts.count(tbl.dataPut)
		require.Equal(t, deltaCrashFiles, tbl.uploaded, "the copy's data files went through the proxy")
		return tbl
	}

	took, writing := calibrateS3Crash(t, upload("calibration"), puts, &st)
	counts := map[crashOutcome]int{}
	killLoop(rng, kills, took, func(i int, delay time.Duration) bool {
		tbl := upload(fmt.Sprintf("attempt-%d", i))
		c := startWatched(t, s3CrashArgs(t, tbl.loc)...)
		inWriting := kills == 1 || i%2 == 1
		if inWriting {
			// The same stratified fraction, of the writing phase.
			delay = time.Duration(float64(delay) / float64(took) * float64(writing))
			if !c.waitFor(t, func() bool { return tbl.wrote(puts) }) {
				delay = 0
			}
		}
		out := c.killAfter(t, delay)
		got := checkS3AfterKill(t, tbl, puts, st)
		if out != finishedBeforeKill {
			out = got
		}
		counts[out]++
		t.Logf("attempt %d after %v (from the first data PUT: %v): %s", i, delay.Round(time.Millisecond), inWriting, out)
		vacuumS3AfterKill(t, tbl, st)
		rerunS3Crash(t, tbl, puts, st)
		left, err := reliability.LocalLeftovers(scratchRoot)
		require.NoError(t, err)
		assert.Empty(t, left, "the rerun leaves nothing the killed run staged or spilled locally")
		return out != finishedBeforeKill
	})
	t.Logf("SUMMARY outcomes %v, rows checked per run: %d", counts, len(st.rows))
}

// uploadS3Table copies the local Delta table src to NAME under prefix in
// bucket on the S3 server.
func uploadS3Table(t *testing.T, src, bucket, prefix, name string) s3CrashTable {
	t.Helper()
	tbl := s3CrashTable{loc: "s3://" + bucket + "/" + prefix + "/" + name, key: "/" + prefix + "/" + name + "/"}
	var err error
	tbl.store, err = delta.NewS3Storage(t.Context(), tbl.loc)
	require.NoError(t, err)
	require.NoError(t, filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		return tbl.store.Put(t.Context(), filepath.ToSlash(rel), b)
	}))
	return tbl
}

// calibrateS3Crash runs the rewrite to completion on tbl, records its
// OPTIMIZE in st and returns how long it took and how long after its
// first data file PUT it ended.
func calibrateS3Crash(t *testing.T, tbl s3CrashTable, puts *putLog, st *s3CrashState) (took, writing time.Duration) {
	t.Helper()
	start := time.Now()
	c := startWatched(t, s3CrashArgs(t, tbl.loc)...)
	seen := c.waitFor(t, func() bool { return tbl.wrote(puts) })
	wrote := time.Now()
	require.NoError(t, <-c.done, "calibration rewrite: %s", c.errOut)
	took, writing = time.Since(start), time.Since(wrote)
	if !seen { // it wrote and committed between two looks
		writing = took / 10
	}
	local := mirrorS3(t, tbl.store)
	require.Equal(t, st.version+1, latestVersion(t, local))
	removes, adds := optimizeActions(t, local, st.version+1)
	require.Len(t, removes, deltaCrashFiles, "rewrite-all rewrites every file")
	st.removes, st.addCount = removes, len(adds)
	checkS3Content(t, local, *st)
	t.Logf("calibration: %v, the last %v of it writing and committing; %d files into %d",
		took.Round(time.Millisecond), writing.Round(time.Millisecond), len(removes), len(adds))
	return took, writing
}

// checkS3AfterKill checks the table a killed rewrite left on S3 and says
// where the kill landed: the original rows and digest; every original
// version kept; the latest version the original or one complete OPTIMIZE,
// put conditionally; every referenced file present.
func checkS3AfterKill(t *testing.T, tbl s3CrashTable, puts *putLog, st s3CrashState) crashOutcome {
	t.Helper()
	local := mirrorS3(t, tbl.store)
	checkS3Content(t, local, st)
	checkCommitsKept(t, local, st.commits)
	ref, files := referencedFiles(t, local), tableFiles(t, local)
	for p := range ref {
		require.True(t, files[p], "the snapshot references %s, which is missing", p)
	}
	v := latestVersion(t, local)
	switch {
	case v == st.version+1:
		removes, adds := optimizeActions(t, local, v)
		assert.Equal(t, st.removes, removes, "the OPTIMIZE removes every planned file")
		assert.Len(t, adds, st.addCount, "the OPTIMIZE adds every written file")
		checkConditionalPut(t, puts, tbl, v)
		return killedAfterCommit
	case v != st.version:
		require.Failf(t, "unexpected version", "the latest version is %d, want the original %d or one OPTIMIZE", v, st.version)
	case !tbl.wrote(puts):
		return killedBeforeWriting
	}
	return killedBeforeCommit
}

// vacuumS3AfterKill vacuums tbl with a forced zero retention after a
// kill: it deletes every file the table does not reference (what the
// killed run wrote and, once committed, what it replaced), and the rows
// and digest stay the original ones.
func vacuumS3AfterKill(t *testing.T, tbl s3CrashTable, st s3CrashState) {
	t.Helper()
	r := runChild(t, "vacuum", "--delta", tbl.loc, "--retain", "0h", "--force")
	require.Equal(t, exitOK, r.Code, "vacuum after the kill: %s", r.Stderr)
	local := mirrorS3(t, tbl.store)
	assert.Equal(t, referencedFiles(t, local), tableFiles(t, local), "vacuum leaves exactly the referenced files")
	checkS3Content(t, local, st)
}

// rerunS3Crash reruns the rewrite on tbl after a kill: it completes with
// one more OPTIMIZE, put conditionally, the same rows and digest, and
// every version before it, the killed run's included, unchanged.
func rerunS3Crash(t *testing.T, tbl s3CrashTable, puts *putLog, st s3CrashState) {
	t.Helper()
	before := commitFiles(t, mirrorS3(t, tbl.store))
	r := runChild(t, s3CrashArgs(t, tbl.loc)...)
	require.Equal(t, exitOK, r.Code, "rerun: %s", r.Stderr)
	local := mirrorS3(t, tbl.store)
	v := latestVersion(t, local)
	require.Equal(t, int64(len(before)), v, "the rerun commits one version")
	assert.Equal(t, "OPTIMIZE", commitOperation(t, local, v))
	checkConditionalPut(t, puts, tbl, v)
	checkCommitsKept(t, local, before)
	checkS3Content(t, local, st)
}

// checkS3Content checks that the table mirrored at local reads the
// original rows with the original digest.
func checkS3Content(t *testing.T, local string, st s3CrashState) {
	t.Helper()
	require.Equal(t, st.rows, deltaContent(t, local), "the table reads its original rows")
	require.Empty(t, st.digest.Diff(deltaDigest(t, local)), "the table's digest is the original one")
}

// checkConditionalPut checks that version v of tbl was put with
// If-None-Match: *, S3's conditional create.
func checkConditionalPut(t *testing.T, puts *putLog, tbl s3CrashTable, v int64) {
	t.Helper()
	h, ok := puts.ifNoneMatch(tbl.commitPut(v))
	require.True(t, ok, "the commit of version %d went through the proxy", v)
	assert.Equal(t, "*", h, "version %d is a conditional create", v)
}

// checkCommitsKept checks that the log at dir still holds every commit of
// want, byte for byte.
func checkCommitsKept(t *testing.T, dir string, want map[int64][]byte) {
	t.Helper()
	got := commitFiles(t, dir)
	for v, b := range want {
		require.Contains(t, got, v, "version %d is lost", v)
		require.Equal(t, string(b), string(got[v]), "version %d changed", v)
	}
}

// commitFiles is every commit in the log of the Delta table at dir, by
// version.
func commitFiles(t *testing.T, dir string) map[int64][]byte {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, delta.LogDir, "[0-9]*.json"))
	require.NoError(t, err)
	out := map[int64][]byte{}
	for _, p := range paths {
		v, err := strconv.ParseInt(strings.TrimSuffix(filepath.Base(p), ".json"), 10, 64)
		require.NoError(t, err, p)
		out[v], err = os.ReadFile(p)
		require.NoError(t, err)
	}
	return out
}

// deltaDigest is the digest (checksum, bbox extent, row count) of every
// row the Delta table at dir reads, as rewrites verify them.
func deltaDigest(t *testing.T, dir string) verify.Digest {
	t.Helper()
	d := verify.NewDigest()
	eachDeltaRecord(t, dir, func(rec arrow.RecordBatch) {
		geom, bbox := verify.Columns(rec.Schema(), "geometry")
		require.NoError(t, d.Add(rec, geom, bbox))
	})
	return d
}

// eachDeltaRecord calls f with every record the latest version of the
// Delta table at dir reads (deletion vectors applied).
func eachDeltaRecord(t *testing.T, dir string, f func(arrow.RecordBatch)) {
	t.Helper()
	tbl, err := delta.OpenLocal(dir)
	require.NoError(t, err)
	s, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	require.NoError(t, tbl.Read(t.Context(), s, delta.ReadOptions{}, func(_ *delta.Add, rec arrow.RecordBatch) error {
		f(rec)
		return nil
	}))
}
