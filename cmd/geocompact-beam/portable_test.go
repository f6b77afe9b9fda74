package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"sync/atomic"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/internal/testing/enginetest"
	"github.com/geocompact/geocompact/job"
	format "github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/catalogs"
)

// The portable suite submits pipelines to a job server through Beam's Job
// API, with the workers started in this process (LOOPBACK): Beam's Flink
// job server (scripts/start-flink.sh), or any other portable one.
//
//	GEOCOMPACT_TEST_PORTABLE_ENDPOINT  the job endpoint, host:port
//	GEOCOMPACT_TEST_PORTABLE_RUNNER    Beam's runner name (default flink)
//	GEOCOMPACT_PORTABLE=1              run the suite: a missing endpoint fails
//
// Without GEOCOMPACT_PORTABLE and an endpoint the suite is skipped, so that
// go test ./... needs no job server.

// portable points Beam's flags at the job server for the rest of the test
// and returns the runner's name.
func portable(t *testing.T) string {
	t.Helper()
	endpoint := os.Getenv("GEOCOMPACT_TEST_PORTABLE_ENDPOINT")
	if endpoint == "" {
		if os.Getenv("GEOCOMPACT_PORTABLE") != "" {
			t.Fatal("GEOCOMPACT_PORTABLE is set but GEOCOMPACT_TEST_PORTABLE_ENDPOINT is not: start a job server (scripts/start-flink.sh)")
		}
		t.Skip("no portable job server: set GEOCOMPACT_TEST_PORTABLE_ENDPOINT (scripts/start-flink.sh)")
	}
	runner := os.Getenv("GEOCOMPACT_TEST_PORTABLE_RUNNER")
	if runner == "" {
		runner = "flink"
	}
	set := func(name, value string) {
		f := flag.Lookup(name)
		require.NotNil(t, f, "beam flag %s", name)
		old := f.Value.String()
		require.NoError(t, flag.Set(name, value))
		t.Cleanup(func() { flag.Set(name, old) })
	}
	set("runner", runner)
	set("endpoint", endpoint)
	set("environment_type", "LOOPBACK")
	set("parallelism", "2")
	return runner
}

// TestPortableMatchesLocal runs the rewrite on the portable job server and
// checks, on twin tables, that it writes exactly the files of the local
// engine, verified, in one commit (or the local engine's batches with
// partial progress).
func TestPortableMatchesLocal(t *testing.T) {
	runner := portable(t)
	mor := map[string]string{"write.delete.mode": "merge-on-read"}
	deleteSome := func(tbl *table.Table) {
		_, err := tbl.Delete(t.Context(), iceberg.LessThan(iceberg.Reference("id"), int64(500)), nil)
		require.NoError(t, err)
	}
	opts := func(kv ...string) map[string]string {
		m := map[string]string{"rewrite-all": "true", "target-file-size-bytes": "65536"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	small := "1048576" // a 1 MiB budget: the groups below are shuffled
	cases := []struct {
		name    string
		gen     bench.GenerateConfig
		prepare func(*table.Table)
		curve   string
		options map[string]string
		// whole: every group is sorted whole by one bundle, nothing shuffled.
		whole bool
		// minBuckets: a group is scattered into at least this many buckets.
		minBuckets int
	}{
		{"hilbert-partitioned", bench.GenerateConfig{Rows: 12000, Commits: 8, PartitionBy: "day(ts)"}, nil, "hilbert", opts("max-group-memory-bytes", small), false, 2},
		{"kd-clustered", bench.GenerateConfig{Rows: 15000, Commits: 8, Distribution: bench.Clustered}, nil, "kd", opts("max-group-memory-bytes", small), false, 2},
		{"str", bench.GenerateConfig{Rows: 12000, Commits: 8}, nil, "str", opts("max-group-memory-bytes", small), false, 2},
		{"whole-group", bench.GenerateConfig{Rows: 12000, Commits: 8}, nil, "hilbert", opts(), true, 0},
		{"shuffled-16-buckets", bench.GenerateConfig{Rows: 60000, Commits: 10}, nil, "hilbert", opts("max-group-memory-bytes", small), false, 16},
		{"mor-deletes", bench.GenerateConfig{Rows: 10000, Commits: 6, Properties: mor}, deleteSome, "hilbert", opts("max-group-memory-bytes", small), false, 2},
		{"partial-progress", bench.GenerateConfig{Rows: 12000, Commits: 8, PartitionBy: "day(ts)"}, nil, "hilbert",
			opts("max-group-memory-bytes", small, "partial-progress.enabled", "true", "partial-progress.max-commits", "3"), false, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			local, dist := twin(t, tc.gen, tc.prepare)
			cfg := engine.Request{Curve: tc.curve, Options: tc.options}
			if tc.minBuckets > 0 {
				cat, err := catalogs.Open(t.Context(), dist)
				require.NoError(t, err)
				j, err := job.Prepare(t.Context(), cat, "geo.t", cfg)
				require.NoError(t, err)
				most := 0
				for _, g := range j.Groups {
					most = max(most, g.Buckets)
				}
				require.GreaterOrEqual(t, most, tc.minBuckets, "buckets of the largest group")
			}
			cat, err := catalogs.Open(t.Context(), local)
			require.NoError(t, err)
			want, err := enginetest.Rewrite(t.Context(), cat, "geo.t", cfg)
			require.NoError(t, err)
			before := snapshots(load(t, dist))

			got, err := rewrite(t.Context(), dist, "geo.t", cfg, runner)
			require.NoError(t, err)
			assert.True(t, got.Verified)
			assert.Equal(t, runner, got.Runner)
			if tc.whole {
				assert.Zero(t, got.ShuffleBytes)
			} else {
				assert.Positive(t, got.ShuffleBytes)
			}
			assert.Equal(t, len(want.Plan.Groups), len(got.Plan.Groups))
			assert.Equal(t, want.AddedDataFilesCount, got.AddedDataFilesCount)
			assert.Equal(t, want.RewrittenDataFilesCount, got.RewrittenDataFilesCount)
			assert.Equal(t, want.RemovedDeleteFilesCount, got.RemovedDeleteFilesCount)
			assert.Zero(t, got.FailedDataFilesCount)
			dt := load(t, dist)
			assert.Equal(t, fileIDs(t, load(t, local)), fileIDs(t, dt))
			assert.Equal(t, table.OpReplace, dt.CurrentSnapshot().Summary.Operation)
			assert.NotEmpty(t, dt.CurrentSnapshot().Summary.Properties[format.SummaryJobID])

			// One commit (the local engine's batches with partial progress),
			// and nothing left behind: the same Parquet files on disk as
			// the local engine's (old and new), no job result file.
			assert.Equal(t, want.SnapshotsCommitted, got.SnapshotsCommitted)
			if _, partial := tc.options["partial-progress.enabled"]; partial {
				assert.Greater(t, got.SnapshotsCommitted, 1)
			} else {
				assert.Equal(t, 1, got.SnapshotsCommitted)
			}
			assert.Len(t, snapshots(dt), len(before)+got.SnapshotsCommitted)
			assert.Len(t, dirFiles(t, dist.Warehouse), len(dirFiles(t, local.Warehouse)))
			assert.Empty(t, jobLeftovers(t, dist.Warehouse))
		})
	}
}

// TestPortableBundleFailsOnce fails one bucket bundle once, after it wrote
// its files: the runner retries it or fails the job. Either way the table
// ends with one complete commit of the local engine's files and nothing
// else on disk (after a rerun when the job failed).
func TestPortableBundleFailsOnce(t *testing.T) {
	runner := portable(t)
	local, dist := twin(t, bench.GenerateConfig{Rows: 8000, Commits: 6}, nil)
	cfg := engine.Request{Curve: "hilbert", Options: shuffled}
	cat, err := catalogs.Open(t.Context(), local)
	require.NoError(t, err)
	_, err = enginetest.Rewrite(t.Context(), cat, "geo.t", cfg)
	require.NoError(t, err)
	before := snapshots(load(t, dist))
	files := dirFiles(t, dist.Warehouse)

	var failed atomic.Bool
	testHookBucket = func() error {
		if failed.CompareAndSwap(false, true) {
			return errors.New("injected bundle failure")
		}
		return nil
	}
	t.Cleanup(func() { testHookBucket = nil })
	res, err := rewrite(t.Context(), dist, "geo.t", cfg, runner)
	require.True(t, failed.Load(), "no bundle failed")
	if err != nil {
		t.Logf("%s failed the job: %v", runner, err)
		assert.Equal(t, before, snapshots(load(t, dist)))
		assert.Equal(t, files, dirFiles(t, dist.Warehouse))
		assert.Empty(t, jobLeftovers(t, dist.Warehouse))
		res, err = rewrite(t.Context(), dist, "geo.t", cfg, runner)
		require.NoError(t, err)
	} else {
		t.Logf("%s retried the failed bundle", runner)
	}
	assert.True(t, res.Verified)
	assert.Equal(t, 1, res.SnapshotsCommitted)
	assert.Len(t, snapshots(load(t, dist)), len(before)+1)
	assert.Equal(t, fileIDs(t, load(t, local)), fileIDs(t, load(t, dist)))
	assert.Len(t, dirFiles(t, dist.Warehouse), len(dirFiles(t, local.Warehouse)))
	assert.Empty(t, jobLeftovers(t, dist.Warehouse))
}

// TestPortableCLI runs the command as a user does against the job server:
// --runner, --endpoint and --environment_type LOOPBACK on the command line.
func TestPortableCLI(t *testing.T) {
	runner := portable(t)
	_, spec := twin(t, bench.GenerateConfig{Rows: 4000, Commits: 5}, nil)
	var out, errOut bytes.Buffer
	code := run(t.Context(), []string{"rewrite", "--warehouse", spec.Warehouse, "--table", "geo.t", "--curve", "hilbert",
		"--runner", runner, "--endpoint", os.Getenv("GEOCOMPACT_TEST_PORTABLE_ENDPOINT"), "--environment_type", "LOOPBACK",
		"--option", "rewrite-all=true", "--json"}, &out, &errOut)
	require.Equal(t, exitOK, code, errOut.String())
	var doc map[string]any
	require.NoError(t, json.Unmarshal(out.Bytes(), &doc))
	assert.Equal(t, runner, doc["runner"])
	assert.Equal(t, true, doc["verified"])
	assert.EqualValues(t, 1, doc["snapshots_committed"])
}
