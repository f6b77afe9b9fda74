package job_test

import (
	"crypto/md5"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/cluster"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/internal/testing/icebergtest"
	"github.com/geocompact/geocompact/job"
	format "github.com/geocompact/geocompact/table"
)

// worker decodes a job as a worker process does and opens it.
func worker(t *testing.T, cat catalog.Catalog, j *job.Rewrite) *job.Rewrite {
	t.Helper()
	b, err := json.Marshal(j)
	require.NoError(t, err)
	var w job.Rewrite
	require.NoError(t, json.Unmarshal(b, &w))
	require.NoError(t, w.Open(t.Context(), cat))
	return &w
}

// runStage runs units in a fresh worker, every unit's JSON travelling as
// it does between processes, and returns the results as they come back;
// twice runs every unit a second time (an engine's retry or speculation).
func runStage(t *testing.T, cat catalog.Catalog, j *job.Rewrite, units []job.Unit, twice bool) []job.Result {
	t.Helper()
	w := worker(t, cat, j)
	var out []job.Result
	for _, u := range units {
		b, err := json.Marshal(u)
		require.NoError(t, err)
		var got job.Unit
		require.NoError(t, json.Unmarshal(b, &got))
		for range map[bool]int{false: 1, true: 2}[twice] {
			res, err := w.Run(t.Context(), got)
			require.NoError(t, err, "unit %s", b)
			rb, err := json.Marshal(res)
			require.NoError(t, err)
			var back job.Result
			require.NoError(t, json.Unmarshal(rb, &back))
			out = append(out, back)
		}
	}
	return out
}

// runStaged runs a planned job stage by stage as a driver does (Units,
// then Next until it returns none) and commits it.
func runStaged(t *testing.T, cat catalog.Catalog, j *job.Rewrite, twice bool) (*engine.Result, []string) {
	t.Helper()
	var kinds []string
	units := j.Units()
	var results []job.Result
	for len(units) > 0 {
		kinds = append(kinds, units[0].Kind)
		results = append(results, runStage(t, cat, j, units, twice)...)
		var err error
		units, err = j.Next(results)
		require.NoError(t, err)
	}
	files, in, out, err := j.Gather(results)
	require.NoError(t, err)
	res, err := worker(t, cat, j).Commit(t.Context(), cat, files, in, out)
	require.NoError(t, err)
	_, err = j.Abort(t.Context(), cat)
	require.NoError(t, err)
	return res, kinds
}

// TestShuffledUnitsMatchRewrite checks that a group larger than a
// worker's budget, run as scatter, bucket and span units through shuffle
// files, writes exactly the files the local engine writes, commits once,
// and leaves no shuffle file, also when every unit runs twice.
func TestShuffledUnitsMatchRewrite(t *testing.T) {
	t.Parallel()
	opts := icebergtest.Opts("rewrite-all", "true", "target-file-size-bytes", "65536", "max-group-memory-bytes", icebergtest.SpillBudget)
	oneFile := icebergtest.Opts("rewrite-all", "true", "max-group-memory-bytes", icebergtest.SpillBudget)
	all := []string{job.KindScatter, job.KindBucket, job.KindSpan}
	for _, tc := range []struct {
		name  string
		gen   bench.GenerateConfig
		curve string
		twice bool
		opts  map[string]string
		// stages are the kinds of each stage's first unit.
		stages []string
	}{
		{"hilbert", bench.GenerateConfig{Rows: 15000, Commits: 10, Distribution: bench.Clustered}, "hilbert", false, opts, all},
		{"kd-retried", bench.GenerateConfig{Rows: 15000, Commits: 10, Distribution: bench.Clustered}, "kd", true, opts, all},
		// Its buckets split each partition where its files end: no span.
		// One file from many buckets' fragments, at the table's target:
		// the writer is handed other batches than in the local rewrite.
		{"hilbert-one-file", bench.GenerateConfig{Rows: 60000, Commits: 12}, "hilbert", false, oneFile, all},
		{"zorder-partitioned", bench.GenerateConfig{Rows: 12000, Commits: 8, PartitionBy: "day(ts)"}, "zorder", false, opts, all[:2]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := engine.Request{Curve: tc.curve, Options: tc.opts}
			local, dist, name := icebergtest.TwinTables(t, tc.gen, nil)
			tbl := icebergtest.Load(t, dist, name)
			before := icebergtest.Digest(t, tbl)
			dir := strings.TrimPrefix(tbl.Location(), "file://")
			want := icebergtest.Rewrite(t, local, name, req)

			j, err := job.Prepare(t.Context(), dist, name, req)
			require.NoError(t, err)
			require.NoError(t, j.SetShuffle(job.ShuffleAlways, 2))
			require.NotEmpty(t, j.Shuffled, "a group over the budget is shuffled")
			res, kinds := runStaged(t, dist, j, tc.twice)
			assert.Equal(t, tc.stages, kinds)

			tbl = icebergtest.Load(t, dist, name)
			icebergtest.CheckUnchanged(t, before, tbl)
			assert.True(t, res.Verified)
			assert.Equal(t, want.AddedDataFilesCount, res.AddedDataFilesCount)
			assert.Equal(t, j.ID, tbl.CurrentSnapshot().Summary.Properties[format.SummaryJobID])
			assert.Equal(t, icebergtest.FileRows(t, icebergtest.Load(t, local, name)), icebergtest.FileRows(t, tbl))
			assert.Equal(t, fileSums(t, icebergtest.Load(t, local, name)), fileSums(t, tbl), "the local rewrite's bytes")
			for _, f := range icebergtest.DirFiles(t, dir) {
				assert.NotContains(t, f, "geocompact-shuffle/", "shuffle files are deleted after the commit")
			}
		})
	}
}

// fileSums returns the md5 sums of tbl's data files, sorted.
func fileSums(t *testing.T, tbl *table.Table) []string {
	t.Helper()
	var out []string
	for _, f := range icebergtest.Files(t, tbl) {
		b, err := os.ReadFile(strings.TrimPrefix(f.File.FilePath(), "file://"))
		require.NoError(t, err)
		out = append(out, fmt.Sprintf("%x", md5.Sum(b)))
	}
	slices.Sort(out)
	return out
}

// TestScatterWritesAsItHolds runs scatter units that hold little before
// they write: several shuffle files per bucket from one unit, read back
// in order by the buckets, give the local rewrite's files. It is not
// parallel: it sets how much a scatter unit holds.
func TestScatterWritesAsItHolds(t *testing.T) {
	defer job.SetScatterHold(64 << 10)()
	req := engine.Request{Curve: "hilbert", Options: icebergtest.Opts("rewrite-all", "true", "target-file-size-bytes", "65536", "max-group-memory-bytes", icebergtest.SpillBudget)}
	local, dist, name := icebergtest.TwinTables(t, bench.GenerateConfig{Rows: 15000, Commits: 10, Distribution: bench.Clustered}, nil)
	icebergtest.Rewrite(t, local, name, req)
	j, err := job.Prepare(t.Context(), dist, name, req)
	require.NoError(t, err)
	require.Equal(t, 1, j.ScatterRun, "with no count of workers, a scatter unit per file")
	require.NoError(t, j.SetShuffle(job.ShuffleAlways, 1))
	require.Greater(t, j.ScatterRun, 1, "a unit scatters several files")
	scatter := runStage(t, dist, j, j.Units(), false)
	assert.Positive(t, scatter[0].ShuffleBytes, "a scatter unit reports the bytes it sent on")
	perBucket := map[int]int{}
	for _, s := range scatter[0].Shuffled {
		perBucket[s.Bucket]++
	}
	require.Greater(t, slices.Max(slices.Collect(maps.Values(perBucket))), 1, "a bucket got several shuffle files from one unit")
	res, _ := runStaged(t, dist, j, false)
	assert.True(t, res.Verified)
	assert.Equal(t, fileSums(t, icebergtest.Load(t, local, name)), fileSums(t, icebergtest.Load(t, dist, name)))
}

// spillTable returns a table of one group over the 1 MiB budget, and the
// Hilbert rewrite that spills it.
func spillTable(t *testing.T) (catalog.Catalog, string, engine.Request) {
	t.Helper()
	cat, name := icebergtest.NewTable(t, icebergtest.SQLite(t), bench.GenerateConfig{Rows: 8000, Commits: 6, Distribution: bench.Clustered})
	return cat, name, engine.Request{Curve: "hilbert", Options: icebergtest.Opts("rewrite-all", "true", "target-file-size-bytes", "65536", "max-group-memory-bytes", icebergtest.SpillBudget)}
}

// TestUnitsRefused checks that a worker refuses units that are not its
// job's, naming what is wrong, before it reads or writes anything.
func TestUnitsRefused(t *testing.T) {
	t.Parallel()
	cat, name, req := spillTable(t)
	j, err := job.Prepare(t.Context(), cat, name, req)
	require.NoError(t, err)
	require.NoError(t, j.SetShuffle(job.ShuffleAuto, 2))
	require.Equal(t, []int{0}, j.Shuffled, "one group is more than half the rows")
	w := worker(t, cat, j)
	loc := strings.TrimSuffix(icebergtest.Load(t, cat, name).Location(), "/")
	for _, tc := range []struct {
		unit job.Unit
		want string
	}{
		{job.Unit{Job: "ffffffffffffffff", Kind: job.KindScatter}, "not of job"},
		{job.Unit{Job: j.ID, Group: 3, Kind: job.KindScatter}, "has no group 3"},
		{job.Unit{Job: j.ID, Kind: "merge"}, `unknown kind of unit "merge"`},
		{job.Unit{Job: j.ID}, "is shuffled: it has no whole-group unit"},
		{job.Unit{Job: j.ID, Kind: job.KindScatter, File: 999}, "has no input file 999"},
		{job.Unit{Job: j.ID, Kind: job.KindScatter, Count: 99}, "has no scatter unit of 99 files from file 0"},
		{job.Unit{Job: j.ID, Kind: job.KindBucket, Bucket: -1, Inputs: []string{"x"}}, "has no bucket -1"},
		{job.Unit{Job: j.ID, Kind: job.KindSpan}, "names no shuffle file"},
		{job.Unit{Job: j.ID, Kind: job.KindSpan, Inputs: []string{"/etc/passwd"}}, "not a shuffle file of job"},
		{job.Unit{Job: j.ID, Kind: job.KindBucket, Inputs: []string{"/tmp/geocompact-shuffle/" + j.Tag() + "x.arrow"}}, "not a shuffle file of job " + j.ID + " under " + loc},
	} {
		_, err := w.Run(t.Context(), tc.unit)
		assert.ErrorContains(t, err, tc.want, "%+v", tc.unit)
	}
}

// TestSetShuffleAuto shuffles a group over the budget only when it holds
// more than its share of the rows for the workers.
func TestSetShuffleAuto(t *testing.T) {
	t.Parallel()
	j := &job.Rewrite{Groups: []engine.GroupSpec{
		{Records: 600, Buckets: 3, Scale: &cluster.Scale{}},
		{Records: 300, Buckets: 2, Scale: &cluster.Scale{}},
		{Records: 900, Whole: true, Scale: &cluster.Scale{}}, // sorted in memory
		{Records: 900, Buckets: 9},                           // binpack
	}}
	// 2,700 rows: group 0 is more than its share for 5 workers, 1 for 10.
	for workers, want := range map[int][]int{1: nil, 4: nil, 5: {0}, 9: {0}, 10: {0, 1}} {
		require.NoError(t, j.SetShuffle(job.ShuffleAuto, workers))
		assert.Equal(t, want, j.Shuffled, "%d workers", workers)
	}
	require.NoError(t, j.SetShuffle(job.ShuffleAlways, 1))
	assert.Equal(t, []int{0, 1}, j.Shuffled)
}

// TestGatherNamesMissingUnits checks that a commit without the result of
// every unit of every stage is refused, naming a missing unit.
func TestGatherNamesMissingUnits(t *testing.T) {
	t.Parallel()
	cat, name, req := spillTable(t)
	j, err := job.Prepare(t.Context(), cat, name, req)
	require.NoError(t, err)
	require.NoError(t, j.SetShuffle(job.ShuffleAlways, 1))
	scatter := runStage(t, cat, j, j.Units(), false)
	_, _, _, err = j.Gather(scatter[1:])
	require.ErrorContains(t, err, `"kind":"scatter"`, "the first scatter's result is missing")
	buckets, err := j.Next(scatter)
	require.NoError(t, err)
	require.NotEmpty(t, buckets)
	assert.Equal(t, job.KindBucket, buckets[0].Kind)
	_, _, _, err = j.Gather(scatter)
	require.ErrorContains(t, err, `"kind":"bucket"`)

	// Next gives again what a failed stage did not finish.
	done := runStage(t, cat, j, buckets[1:], false)
	again, err := j.Next(append(scatter, done...))
	require.NoError(t, err)
	require.Len(t, again, 1)
	assert.Equal(t, buckets[0].Bucket, again[0].Bucket)

	_, err = j.Abort(t.Context(), cat)
	require.NoError(t, err)
	dir := strings.TrimPrefix(icebergtest.Load(t, cat, name).Location(), "file://")
	for _, f := range icebergtest.DirFiles(t, dir) {
		assert.NotContains(t, f, "geocompact-shuffle/", "abort deletes shuffle files")
	}
}

// TestSetShuffleOff keeps every group whole (one unit per group) with
// mode never, and with auto on one worker; an unknown mode is refused.
func TestSetShuffleOff(t *testing.T) {
	t.Parallel()
	cat, name, req := spillTable(t)
	j, err := job.Prepare(t.Context(), cat, name, req)
	require.NoError(t, err)
	require.ErrorContains(t, j.SetShuffle("sometimes", 2), `shuffle "sometimes": want auto, always or never`)
	require.NoError(t, j.SetShuffle(job.ShuffleAuto, 1))
	assert.Empty(t, j.Shuffled)
	require.NoError(t, j.SetShuffle(job.ShuffleNever, 8))
	assert.Empty(t, j.Shuffled)
	assert.Equal(t, []job.Unit{{Job: j.ID, Group: 0}}, j.Units())
	res, kinds := runStaged(t, cat, j, false)
	assert.Equal(t, []string{job.KindGroup}, kinds)
	assert.True(t, res.Verified)
}

// TestPrepareShuffleSamplesOnlySpread plans a group over the budget: it
// is sampled for buckets only when the mode spreads it; otherwise it is
// Local, one worker's unit, and a scatter of it is refused.
func TestPrepareShuffleSamplesOnlySpread(t *testing.T) {
	t.Parallel()
	cat, name, req := spillTable(t)
	for _, tc := range []struct {
		sh     job.Shuffle
		spread bool
	}{{job.Shuffle{Mode: job.ShuffleNever, Workers: 8}, false}, {job.Shuffle{Mode: job.ShuffleAuto, Workers: 1}, false},
		{job.Shuffle{Mode: job.ShuffleAuto, Workers: 2}, true}, {job.Shuffle{Mode: job.ShuffleAlways}, true}} {
		j, err := job.PrepareShuffle(t.Context(), cat, name, req, tc.sh)
		require.NoError(t, err)
		g := j.Groups[0]
		assert.Equal(t, tc.spread, g.Scale != nil, "%+v: sampled", tc.sh)
		assert.Equal(t, !tc.spread, g.Local, "%+v: local", tc.sh)
		assert.Equal(t, tc.spread, len(j.Shuffled) == 1, "%+v: shuffled", tc.sh)
		if !tc.spread {
			assert.Equal(t, []job.Unit{{Job: j.ID}}, j.Units())
			_, _, err := worker(t, cat, j).ScatterFile(t.Context(), 0, g.Files[0], nil)
			assert.ErrorContains(t, err, "is rewritten whole by one worker")
		}
	}
	_, err := job.PrepareShuffle(t.Context(), cat, name, req, job.Shuffle{Mode: "often"})
	assert.ErrorContains(t, err, `shuffle "often": want auto, always or never`)
}
