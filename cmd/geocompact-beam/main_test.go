package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/internal/testing/enginetest"
	"github.com/geocompact/geocompact/job"
	"github.com/geocompact/geocompact/table/catalogs"
)

func TestMain(m *testing.M) {
	if os.Getenv(driverArgsEnv) != "" {
		killedDriver()
	}
	flag.Parse()
	flag.Set("runner", "prism")
	beam.Init()
	os.Exit(m.Run())
}

// twin generates the same table in two warehouses.
func twin(t *testing.T, gen bench.GenerateConfig, prepare func(*table.Table)) (local, dist catalogs.Spec) {
	t.Helper()
	gen.Table, gen.Seed = "geo.t", 7
	mk := func() catalogs.Spec {
		spec := catalogs.Spec{Warehouse: t.TempDir()}
		cat, err := catalogs.Open(t.Context(), spec)
		require.NoError(t, err)
		_, err = bench.Generate(t.Context(), cat, gen)
		require.NoError(t, err)
		if prepare != nil {
			tbl, err := catalogs.LoadTable(t.Context(), cat, "geo.t")
			require.NoError(t, err)
			prepare(tbl)
		}
		return spec
	}
	return mk(), mk()
}

func load(t *testing.T, spec catalogs.Spec) *table.Table {
	t.Helper()
	cat, err := catalogs.Open(t.Context(), spec)
	require.NoError(t, err)
	tbl, err := catalogs.LoadTable(t.Context(), cat, "geo.t")
	require.NoError(t, err)
	return tbl
}

// fileIDs returns the id sequence of every live data file, keyed by its
// first id: equal maps mean the same rows in the same order in the same
// files.
func fileIDs(t *testing.T, tbl *table.Table) map[int64][]int64 {
	t.Helper()
	tasks, err := tbl.Scan().PlanFiles(t.Context())
	require.NoError(t, err)
	out := map[int64][]int64{}
	for _, task := range tasks {
		_, recs, err := tbl.Scan().ReadTasks(t.Context(), []table.FileScanTask{task})
		require.NoError(t, err)
		var ids []int64
		for rec, err := range recs {
			require.NoError(t, err)
			ids = append(ids, rec.Column(rec.Schema().FieldIndices("id")[0]).(*array.Int64).Int64Values()...)
			rec.Release()
		}
		require.NotEmpty(t, ids)
		out[ids[0]] = ids
	}
	return out
}

func dirFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(p) == ".parquet" {
			out = append(out, p)
		}
		return err
	}))
	sort.Strings(out)
	return out
}

// TestPrismMatchesLocal runs the rewrite on in-process Prism and checks
// it writes exactly what the local engine writes on a twin table.
func TestPrismMatchesLocal(t *testing.T) {
	mor := map[string]string{"write.delete.mode": "merge-on-read"}
	deleteSome := func(tbl *table.Table) {
		_, err := tbl.Delete(t.Context(), iceberg.LessThan(iceberg.Reference("id"), int64(500)), nil)
		require.NoError(t, err)
	}
	base := map[string]string{"rewrite-all": "true", "target-file-size-bytes": "65536", "max-group-memory-bytes": "1048576"}
	cases := []struct {
		name    string
		gen     bench.GenerateConfig
		prepare func(*table.Table)
		curve   string
		// whole: the default budget sorts every group in memory, so
		// groups are rewritten whole and nothing is shuffled.
		whole bool
	}{
		{"hilbert-partitioned", bench.GenerateConfig{Rows: 12000, Commits: 8, PartitionBy: "day(ts)"}, nil, "hilbert", false},
		{"hilbert-whole-groups", bench.GenerateConfig{Rows: 12000, Commits: 8, PartitionBy: "day(ts)"}, deleteSome, "hilbert", true},
		{"hilbert-deletes", bench.GenerateConfig{Rows: 10000, Commits: 6, Properties: mor}, deleteSome, "hilbert", false},
		{"binpack-deletes", bench.GenerateConfig{Rows: 8000, Commits: 6, Properties: mor}, deleteSome, "", false},
		// kd cuts its files at its leaves, from leaf counts every bucket
		// learns from the scatter's.
		{"kd-clustered", bench.GenerateConfig{Rows: 15000, Commits: 8, Distribution: bench.Clustered}, nil, "kd", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			local, dist := twin(t, tc.gen, tc.prepare)
			cfg := engine.Request{Curve: tc.curve, Options: base}
			if tc.whole {
				cfg.Options = map[string]string{"rewrite-all": "true", "target-file-size-bytes": "65536"}
			}
			cat, err := catalogs.Open(t.Context(), local)
			require.NoError(t, err)
			want, err := enginetest.Rewrite(t.Context(), cat, "geo.t", cfg)
			require.NoError(t, err)
			got, err := rewrite(t.Context(), dist, "geo.t", cfg, "prism")
			require.NoError(t, err)
			assert.True(t, got.Verified)
			assert.Equal(t, "prism", got.Runner)
			// Only a sorted group over the budget is shuffled: a bin-packed
			// one streams through one worker, as a whole-group unit.
			if tc.whole || tc.curve == "" {
				assert.Zero(t, got.ShuffleBytes)
			} else {
				assert.Positive(t, got.ShuffleBytes)
			}
			assert.Equal(t, len(want.Plan.Groups), len(got.Plan.Groups))
			assert.Equal(t, want.AddedDataFilesCount, got.AddedDataFilesCount)
			assert.Equal(t, want.RemovedDeleteFilesCount, got.RemovedDeleteFilesCount)
			lt, dt := load(t, local), load(t, dist)
			assert.Equal(t, fileIDs(t, lt), fileIDs(t, dt))
			assert.Equal(t, table.OpReplace, dt.CurrentSnapshot().Summary.Operation)

			var buf bytes.Buffer
			require.NoError(t, writeResult(&buf, got, true))
			var doc map[string]any
			require.NoError(t, json.Unmarshal(buf.Bytes(), &doc))
			assert.Equal(t, "prism", doc["runner"])
			assert.Contains(t, doc, "shuffle_bytes")
		})
	}
}

// TestPrismFailedBundleLeavesNothing fails a bucket bundle: the job
// commits nothing and leaves no file behind; a rerun succeeds.
func TestPrismFailedBundleLeavesNothing(t *testing.T) {
	_, spec := twin(t, bench.GenerateConfig{Rows: 8000, Commits: 6}, nil)
	before := load(t, spec)
	snap := before.CurrentSnapshot().SnapshotID
	files := dirFiles(t, spec.Warehouse)
	cfg := engine.Request{Curve: "hilbert", Options: map[string]string{"rewrite-all": "true", "target-file-size-bytes": "65536", "max-group-memory-bytes": "1048576"}}
	testHookBucket = func() error { return errors.New("injected bundle failure") }
	_, err := rewrite(t.Context(), spec, "geo.t", cfg, "prism")
	testHookBucket = nil
	require.ErrorContains(t, err, "injected bundle failure")
	assert.Equal(t, snap, load(t, spec).CurrentSnapshot().SnapshotID)
	assert.Equal(t, files, dirFiles(t, spec.Warehouse))
	assert.NotEmpty(t, files)

	res, err := rewrite(t.Context(), spec, "geo.t", cfg, "prism")
	require.NoError(t, err)
	assert.True(t, res.Verified)
}

// TestCLI runs the command as a user does: Beam's flags mixed with the
// command's, the JSON result, and the exit codes.
func TestCLI(t *testing.T) {
	_, spec := twin(t, bench.GenerateConfig{Rows: 4000, Commits: 5}, nil)
	var out, errOut bytes.Buffer
	code := run(t.Context(), []string{"rewrite", "--warehouse", spec.Warehouse, "--runner", "prism", "--table", "geo.t",
		"--curve", "hilbert", "--option", "rewrite-all=true", "--json"}, &out, &errOut)
	require.Equal(t, exitOK, code, errOut.String())
	var doc map[string]any
	require.NoError(t, json.Unmarshal(out.Bytes(), &doc))
	assert.Equal(t, "prism", doc["runner"])
	assert.Equal(t, true, doc["verified"])
	assert.EqualValues(t, 1, doc["snapshots_committed"])

	out.Reset()
	code = run(t.Context(), []string{"rewrite", "--warehouse", spec.Warehouse, "--table", "geo.t"}, &out, &errOut)
	require.Equal(t, exitOK, code, errOut.String())
	assert.Contains(t, out.String(), "nothing rewritten")

	assert.Equal(t, exitUsage, run(t.Context(), []string{"rewrite", "--warehouse", spec.Warehouse}, &out, &errOut))
	assert.Equal(t, exitUsage, run(t.Context(), []string{"rewrite", "--warehouse", spec.Warehouse, "--table", "geo.t", "--option", "no-such=1"}, &out, &errOut))
	assert.Equal(t, exitError, run(t.Context(), []string{"rewrite", "--warehouse", spec.Warehouse, "--table", "geo.missing"}, &out, &errOut))
}

func TestSplitArgs(t *testing.T) {
	b, rest := splitArgs([]string{"rewrite", "--runner", "flink", "--table", "a.b", "--endpoint=x:8099", "--json", "--environment_type", "EXTERNAL"})
	assert.Equal(t, []string{"--runner", "flink", "--endpoint=x:8099", "--environment_type", "EXTERNAL"}, b)
	assert.Equal(t, []string{"rewrite", "--table", "a.b", "--json"}, rest)
}

// TestStepsRunTheJobsUnits gives the steps units that are not theirs to
// run: a unit of another job, a kind the step does not run, a line that
// is not a unit. Each is refused by name, and nothing runs.
func TestStepsRunTheJobsUnits(t *testing.T) {
	_, spec := twin(t, bench.GenerateConfig{Rows: 4000, Commits: 4}, nil)
	cat, err := catalogs.Open(t.Context(), spec)
	require.NoError(t, err)
	cfg := engine.Request{Curve: "hilbert", Options: map[string]string{"rewrite-all": "true", "target-file-size-bytes": "65536", "max-group-memory-bytes": "1048576"}}
	j, err := job.Prepare(t.Context(), cat, "geo.t", cfg)
	require.NoError(t, err)
	units := j.Units()
	require.NotEmpty(t, units)
	require.Equal(t, job.KindScatter, units[0].Kind, "a group over the budget is shuffled")
	fn := jobFn{Spec: spec, job: j}
	line := func(u job.Unit) string {
		b, err := json.Marshal(u)
		require.NoError(t, err)
		return string(b)
	}
	none := func(string) { t.Fatal("a refused unit emitted a result") }
	scatter := &scatterFn{fn}
	noRows := func(string, batch) { t.Fatal("a refused unit emitted rows") }
	noCount := func(bucketCount) { t.Fatal("a refused unit emitted counts") }

	other := units[0]
	other.Job = "0123456789abcdef"
	require.ErrorContains(t, scatter.ProcessElement(t.Context(), line(other), noRows, noCount, none), "not of job "+j.ID)
	require.ErrorContains(t, scatter.ProcessElement(t.Context(), "{not json", noRows, noCount, none), "decode unit")
	whole := job.Unit{Job: j.ID, Group: units[0].Group}
	require.ErrorContains(t, scatter.ProcessElement(t.Context(), line(whole), noRows, noCount, none), "is shuffled")
	require.ErrorContains(t, (&groupFn{fn}).ProcessElement(t.Context(), line(units[0]), none), `a "scatter" unit`)

	// The job's own first unit runs, and reports a result Gather reads.
	var got []string
	require.NoError(t, scatter.ProcessElement(t.Context(), line(units[0]), func(string, batch) {}, func(bucketCount) {}, func(s string) { got = append(got, s) }))
	require.Len(t, got, 1)
	var r job.Result
	require.NoError(t, json.Unmarshal([]byte(got[0]), &r))
	assert.Equal(t, units[0].File, r.File)
	assert.NotEmpty(t, r.In)
	assert.Positive(t, r.ShuffleBytes)
}
