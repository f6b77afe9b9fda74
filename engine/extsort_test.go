package engine_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/engine/spill"
	"github.com/geocompact/geocompact/internal/testing/enginetest"
	"github.com/geocompact/geocompact/spatial"
)

// fileSums returns the SHA-256 of each data file of the table, keyed by
// the file's first id: two rewrites wrote byte-identical files exactly
// when these maps are equal.
func fileSums(t *testing.T, tbl *table.Table) map[int64][sha256.Size]byte {
	t.Helper()
	out := map[int64][sha256.Size]byte{}
	for _, task := range tableFiles(t, tbl) {
		_, recs, err := tbl.Scan().ReadTasks(t.Context(), []table.FileScanTask{task})
		require.NoError(t, err)
		var first int64
		for rec, err := range recs {
			require.NoError(t, err)
			if rec.NumRows() > 0 && first == 0 {
				first = rec.Column(rec.Schema().FieldIndices("id")[0]).(*array.Int64).Value(0)
			}
			rec.Release()
		}
		b, err := os.ReadFile(strings.TrimPrefix(task.File.FilePath(), "file://"))
		require.NoError(t, err)
		out[first] = sha256.Sum256(b)
	}
	return out
}

// TestSpilledSortMatchesInMemory checks that a group sorted through spill
// files is written exactly as the in-memory sort writes it: the same rows,
// in the same order, in the same files.
func TestSpilledSortMatchesInMemory(t *testing.T) {
	t.Parallel()
	deleteSome := func(tbl *table.Table) {
		_, err := tbl.Delete(t.Context(), iceberg.LessThan(iceberg.Reference("id"), int64(700)), nil)
		require.NoError(t, err)
	}
	mor := map[string]string{"write.delete.mode": "merge-on-read"}
	cases := []struct {
		name    string
		cfg     bench.GenerateConfig
		prepare func(*table.Table)
		curves  []string
	}{
		{"points-v2", bench.GenerateConfig{Rows: 20000, Commits: 12, Distribution: bench.Clustered}, nil, []string{"linear", "zorder", "hilbert", "str", "kd"}},
		{"polygons-v2", bench.GenerateConfig{Rows: 8000, Commits: 8, Geometry: bench.Polygons}, nil, []string{"linear", "zorder", "hilbert", "kd"}},
		{"points-v3", bench.GenerateConfig{Rows: 12000, Commits: 8, FormatVersion: 3, Distribution: bench.Clustered}, nil, []string{"hilbert", "zorder"}},
		{"polygons-v3", bench.GenerateConfig{Rows: 6000, Commits: 6, FormatVersion: 3, Geometry: bench.Polygons}, nil, []string{"linear", "hilbert"}},
		{"deletes-v2", bench.GenerateConfig{Rows: 15000, Commits: 10, Properties: mor}, deleteSome, []string{"hilbert", "linear"}},
	}
	for _, tc := range cases {
		for _, curve := range tc.curves {
			t.Run(tc.name+"/"+curve, func(t *testing.T) {
				mem, spill, name := twinTables(t, tc.cfg, tc.prepare)
				before := tableDigest(t, mustLoad(t, mem, name))
				base := []string{"rewrite-all", "true", "target-file-size-bytes", "65536"}
				resMem := rewrite(t, mem, name, engine.Request{Curve: curve, Options: opts(base...)})
				// Two lanes whatever the machine: the last merge is cut
				// into two parts written at once.
				var parts atomic.Int32
				ctx := engine.WithTestHooks(t.Context(), engine.TestHooks{Lanes: 2, WriteParts: func(n int) { parts.Store(int32(n)) }})
				resSpill, err := enginetest.Rewrite(ctx, spill, name, engine.Request{Curve: curve, Options: opts(append(base, "max-group-memory-bytes", spillBudget)...)})
				require.NoError(t, err)

				require.Len(t, resMem.Plan.Groups, 1)
				require.NotNil(t, resMem.Plan.Groups[0].Sort)
				assert.False(t, resMem.Plan.Groups[0].Sort.Spill, "the default budget sorts in memory")
				sp := resSpill.Plan.Groups[0].Sort
				require.NotNil(t, sp)
				require.True(t, sp.Spill, "a 1 MiB budget spills")
				if curve == "linear" {
					assert.Greater(t, sp.Buckets, 1, "a linear order scatters to key ranges")
				} else {
					assert.Greater(t, sp.Runs, 1, "a curve's key merges sorted runs")
					assert.Zero(t, sp.Buckets)
					assert.EqualValues(t, 2, parts.Load(), "the last merge wrote two parts at once")
				}

				checkUnchanged(t, before, mustLoad(t, spill, name))
				assert.Equal(t, resMem.AddedDataFilesCount, resSpill.AddedDataFilesCount)
				assert.Greater(t, resSpill.AddedDataFilesCount, 1)
				assert.Equal(t, fileRows(t, mustLoad(t, mem, name)), fileRows(t, mustLoad(t, spill, name)))
				if curve != "linear" {
					assert.Equal(t, fileSums(t, mustLoad(t, mem, name)), fileSums(t, mustLoad(t, spill, name)), "byte-identical files")
				}
			})
		}
	}
}

// TestInMemorySortInParts checks that a group sorted in memory and written
// by several lanes at once, each its own run of the files, writes the
// files one lane writes, byte for byte.
func TestInMemorySortInParts(t *testing.T) {
	t.Parallel()
	for _, curve := range []string{"hilbert", "kd"} {
		t.Run(curve, func(t *testing.T) {
			one, three, name := twinTables(t, bench.GenerateConfig{Rows: 20000, Commits: 12, Distribution: bench.Clustered}, nil)
			before := tableDigest(t, mustLoad(t, three, name))
			req := engine.Request{Curve: curve, Options: opts("rewrite-all", "true", "target-file-size-bytes", "65536")}
			parts := map[int]*atomic.Int32{1: {}, 3: {}}
			for lanes, cat := range map[int]catalog.Catalog{1: one, 3: three} {
				ctx := engine.WithTestHooks(t.Context(), engine.TestHooks{Lanes: lanes, WriteParts: func(n int) { parts[lanes].Store(int32(n)) }})
				res, err := enginetest.Rewrite(ctx, cat, name, req)
				require.NoError(t, err)
				require.Len(t, res.Plan.Groups, 1)
				require.False(t, res.Plan.Groups[0].Sort.Spill, "sorted in memory")
				require.Greater(t, res.AddedDataFilesCount, 3)
			}
			assert.EqualValues(t, 1, parts[1].Load())
			assert.EqualValues(t, 3, parts[3].Load(), "three lanes write three parts")
			checkUnchanged(t, before, mustLoad(t, three, name))
			assert.Equal(t, fileRows(t, mustLoad(t, one, name)), fileRows(t, mustLoad(t, three, name)))
			assert.Equal(t, fileSums(t, mustLoad(t, one, name)), fileSums(t, mustLoad(t, three, name)), "byte-identical files")
		})
	}
}

// TestSpilledSortPerPartition checks that each partition of a partitioned
// table is its own spilled group, sorted as the in-memory sort sorts it.
func TestSpilledSortPerPartition(t *testing.T) {
	t.Parallel()
	cfg := bench.GenerateConfig{Rows: 16000, Commits: 8, PartitionBy: "day(ts)"}
	mem, spill, name := twinTables(t, cfg, nil)
	before := tableDigest(t, mustLoad(t, spill, name))
	base := []string{"rewrite-all", "true", "target-file-size-bytes", "65536"}
	rewrite(t, mem, name, engine.Request{Curve: "hilbert", Options: opts(base...)})
	res := rewrite(t, spill, name, engine.Request{Curve: "hilbert", Options: opts(append(base, "max-group-memory-bytes", spillBudget)...)})
	require.GreaterOrEqual(t, len(res.Plan.Groups), 3)
	for _, g := range res.Plan.Groups {
		require.NotNil(t, g.Sort, g.Partition)
		assert.True(t, g.Sort.Spill, g.Partition)
	}
	checkUnchanged(t, before, mustLoad(t, spill, name))
	assert.Equal(t, fileRows(t, mustLoad(t, mem, name)), fileRows(t, mustLoad(t, spill, name)))
}

// TestSpillDirProblems checks the spill directory's failures: a missing or
// unwritable directory, and a write that fails mid-scatter (a full disk)
// each give a clear error, commit nothing and leave no file behind.
func TestSpillDirProblems(t *testing.T) {
	t.Parallel()
	cfg := bench.GenerateConfig{Rows: 8000, Commits: 6}
	cases := []struct {
		name string
		dir  func(t *testing.T) string
		hook func() error
		want string
	}{
		{"missing", func(t *testing.T) string { return filepath.Join(t.TempDir(), "nope") }, nil, "spill directory"},
		{"not-a-directory", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "file")
			require.NoError(t, os.WriteFile(p, nil, 0o600))
			return p
		}, nil, "not a directory"},
		{"unwritable", func(t *testing.T) string {
			if os.Geteuid() == 0 {
				// root writes anywhere: a directory inside a file is what
				// cannot be created.
				p := filepath.Join(t.TempDir(), "file")
				require.NoError(t, os.WriteFile(p, nil, 0o600))
				return filepath.Join(p, "sub")
			}
			d := t.TempDir()
			require.NoError(t, os.Chmod(d, 0o500))
			return d
		}, nil, "spill"},
		{"write-fails", func(t *testing.T) string { return t.TempDir() }, func() error {
			return errors.New("no space left on device")
		}, "no space left on device"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cat, name := newTable(t, sqlite(t), cfg)
			tbl := mustLoad(t, cat, name)
			before := tableDigest(t, tbl)
			snap := tbl.CurrentSnapshot().SnapshotID
			dataDir := strings.TrimPrefix(tbl.Location(), "file://") + "/data"
			filesBefore := dirFiles(t, dataDir)
			dir := tc.dir(t)
			ctx := engine.WithTestHooks(t.Context(), engine.TestHooks{SpillWrite: tc.hook})
			_, err := enginetest.Rewrite(ctx, cat, name, engine.Request{Curve: "hilbert",
				Options: opts("rewrite-all", "true", "max-group-memory-bytes", spillBudget, "spill-dir", dir)})
			require.Error(t, err)
			assert.ErrorIs(t, err, spill.ErrDir)
			assert.Contains(t, err.Error(), tc.want)
			tbl = mustLoad(t, cat, name)
			assert.Equal(t, snap, tbl.CurrentSnapshot().SnapshotID, "nothing committed")
			assert.Equal(t, filesBefore, dirFiles(t, dataDir), "no data file left behind")
			assert.Empty(t, tableDigest(t, tbl).Diff(before))
			if st, err := os.Stat(dir); err == nil && st.IsDir() {
				entries, err := os.ReadDir(dir)
				require.NoError(t, err)
				assert.Empty(t, entries, "no spill file left behind")
			}
		})
	}
}

// TestSpillTooSmallFailsBeforeWriting checks the free-space check: a spill
// larger than the directory's free space fails before anything is read or
// written, saying how much it needs and where; the dry run shows the plan.
func TestSpillTooSmallFailsBeforeWriting(t *testing.T) {
	t.Parallel()
	cat, name := newTable(t, sqlite(t), bench.GenerateConfig{Rows: 4000, Commits: 4})
	tbl := mustLoad(t, cat, name)
	snap := tbl.CurrentSnapshot().SnapshotID
	dataDir := strings.TrimPrefix(tbl.Location(), "file://") + "/data"
	filesBefore := dirFiles(t, dataDir)
	o := opts("rewrite-all", "true", "max-group-memory-bytes", spillBudget, "spill-dir", t.TempDir())

	res, err := enginetest.Rewrite(t.Context(), cat, name, engine.Request{Curve: "hilbert", DryRun: true, Options: o})
	require.NoError(t, err)
	sp := res.Plan.Groups[0].Sort
	require.NotNil(t, sp)
	assert.True(t, sp.Spill)
	assert.Positive(t, sp.SpillBytes)
	assert.Greater(t, sp.Runs, 1)

	ctx := engine.WithTestHooks(t.Context(), engine.TestHooks{FreeSpace: func(string) (int64, error) { return 1024, nil }})
	_, err = enginetest.Rewrite(ctx, cat, name, engine.Request{Curve: "hilbert", Options: o})
	require.ErrorIs(t, err, spill.ErrDir)
	assert.Contains(t, err.Error(), "1.0 KiB free")
	assert.Contains(t, err.Error(), o["spill-dir"])
	tbl = mustLoad(t, cat, name)
	assert.Equal(t, snap, tbl.CurrentSnapshot().SnapshotID)
	assert.Equal(t, filesBefore, dirFiles(t, dataDir))
}

// TestSpilledSortScaleFromFileStats checks the spilled sort's scale when
// the files' statistics stand in for the pass over the rows: taken from
// them for a curve over the extent when no deletes apply, not with
// deletes, and confirmed against the rows' extent, the runs written again
// when the statistics were wider than the rows. Every way writes the
// in-memory sort's files byte for byte.
func TestSpilledSortScaleFromFileStats(t *testing.T) {
	t.Parallel()
	deleteSome := func(tbl *table.Table) {
		_, err := tbl.Delete(t.Context(), iceberg.LessThan(iceberg.Reference("id"), int64(700)), nil)
		require.NoError(t, err)
	}
	mor := map[string]string{"write.delete.mode": "merge-on-read"}
	widen := func(b spatial.Bound) spatial.Bound { b.MinX -= 1; b.MaxY += 0.5; return b }
	cases := []struct {
		name      string
		cfg       bench.GenerateConfig
		prepare   func(*table.Table)
		curve     string
		assume    func(spatial.Bound) spatial.Bound
		fromStats bool
	}{
		{"points", bench.GenerateConfig{Rows: 20000, Commits: 12, Distribution: bench.Clustered}, nil, "hilbert", nil, true},
		{"points-zorder", bench.GenerateConfig{Rows: 20000, Commits: 12, Distribution: bench.Clustered}, nil, "zorder", nil, true},
		{"polygons", bench.GenerateConfig{Rows: 8000, Commits: 8, Geometry: bench.Polygons}, nil, "hilbert", nil, true},
		{"points-kd", bench.GenerateConfig{Rows: 20000, Commits: 12, Distribution: bench.Clustered}, nil, "kd", nil, false},
		{"deletes", bench.GenerateConfig{Rows: 15000, Commits: 10, Properties: mor}, deleteSome, "hilbert", nil, false},
		{"stats-wider-than-rows", bench.GenerateConfig{Rows: 20000, Commits: 12, Distribution: bench.Clustered}, nil, "hilbert", widen, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mem, spilled, name := twinTables(t, tc.cfg, tc.prepare)
			base := []string{"rewrite-all", "true", "target-file-size-bytes", "65536"}
			rewrite(t, mem, name, engine.Request{Curve: tc.curve, Options: opts(base...)})
			var assumed int
			ctx := engine.WithTestHooks(t.Context(), engine.TestHooks{FileExtent: func(b spatial.Bound) spatial.Bound {
				assumed++
				if tc.assume != nil {
					return tc.assume(b)
				}
				return b
			}})
			res, err := enginetest.Rewrite(ctx, spilled, name, engine.Request{Curve: tc.curve, Options: opts(append(base, "max-group-memory-bytes", spillBudget)...)})
			require.NoError(t, err)
			require.Len(t, res.Plan.Groups, 1)
			require.True(t, res.Plan.Groups[0].Sort.Spill)
			if tc.fromStats {
				assert.Positive(t, assumed, "the scale comes from the files' statistics")
			} else {
				assert.Zero(t, assumed, "the scale comes from the rows")
			}
			assert.Equal(t, fileSums(t, mustLoad(t, mem, name)), fileSums(t, mustLoad(t, spilled, name)), "byte-identical files")
		})
	}
}

// TestFileParts cuts a group's files into parts of about equal rows that
// each end where a file ends, never an empty part.
func TestFileParts(t *testing.T) {
	per := func(n int64) func(int) int64 { return func(int) int64 { return n } }
	for _, tc := range []struct {
		name      string
		fileRows  func(int) int64
		rows      int64
		parts     int
		wantFirst []int
		wantCuts  []int64
	}{
		{"one part", per(10), 100, 1, []int{0}, nil},
		{"even", per(10), 80, 2, []int{0, 4}, []int64{40}},
		{"odd files, a tie to the earlier end", per(10), 90, 2, []int{0, 4}, []int64{40}},
		{"short last file", per(30), 100, 2, []int{0, 2}, []int64{60}},
		{"one file", per(100), 100, 2, []int{0}, nil},
		{"two files", per(60), 100, 2, []int{0, 1}, []int64{60}},
		{"more parts than files", per(40), 100, 5, []int{0, 1, 2}, []int64{40, 80}},
		{"uneven files", func(i int) int64 { return []int64{70, 5, 5, 5, 5, 5, 5}[min(i, 6)] }, 100, 2, []int{0, 1}, []int64{70}},
		{"no rows", per(10), 0, 2, []int{0}, nil},
	} {
		first, cuts := engine.FileParts(tc.fileRows, tc.rows, tc.parts)
		assert.Equal(t, tc.wantFirst, first, tc.name)
		assert.Equal(t, tc.wantCuts, cuts, tc.name)
	}
}

// TestCancelledPartsLeaveNoFiles cancels a rewrite as its sorted group's
// files start to be written in parts, in memory and spilled: the rewrite
// fails with the cancellation, no file is left beside the table's and
// nothing is committed.
func TestCancelledPartsLeaveNoFiles(t *testing.T) {
	t.Parallel()
	for _, budget := range []string{"1GiB", spillBudget} {
		t.Run(budget, func(t *testing.T) {
			c := sqlite(t)
			cat, name := newTable(t, c, bench.GenerateConfig{Rows: 20000, Commits: 12, Distribution: bench.Clustered})
			tbl := mustLoad(t, cat, name)
			dir := strings.TrimPrefix(tbl.Location(), "file://")
			before, snap := dirFiles(t, dir), tbl.CurrentSnapshot().SnapshotID
			ctx, cancel := context.WithCancelCause(t.Context())
			stop := errors.New("interrupted")
			var parts atomic.Int32
			ctx = engine.WithTestHooks(ctx, engine.TestHooks{Lanes: 2, WriteParts: func(n int) {
				parts.Store(int32(n))
				cancel(stop)
			}})
			_, err := enginetest.Rewrite(ctx, cat, name, engine.Request{Curve: "hilbert",
				Options: opts("rewrite-all", "true", "target-file-size-bytes", "65536", "max-group-memory-bytes", budget)})
			require.Error(t, err)
			assert.ErrorIs(t, err, stop)
			assert.EqualValues(t, 2, parts.Load(), "written in two parts")
			assert.Equal(t, before, dirFiles(t, dir), "no file left")
			assert.Equal(t, snap, mustLoad(t, cat, name).CurrentSnapshot().SnapshotID, "nothing committed")
		})
	}
}
