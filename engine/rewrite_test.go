package engine_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/cluster"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/engine/verify"
	"github.com/geocompact/geocompact/internal/testing/enginetest"
	"github.com/geocompact/geocompact/internal/testing/testenv"
	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/spatial/icebergspatial"
	format "github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/catalogs"
)

// eachCatalog runs f once per catalog backend (SQLite, and PostgreSQL
// when configured), each in its own subtest.
func eachCatalog(t *testing.T, f func(t *testing.T, c testenv.Catalog)) {
	for _, c := range testenv.Catalogs(t) {
		t.Run(c.Backend, func(t *testing.T) { f(t, c) })
	}
}

// newTable generates a table in a fresh catalog of c's backend.
func newTable(t testing.TB, c testenv.Catalog, cfg bench.GenerateConfig) (catalog.Catalog, string) {
	t.Helper()
	cat, _ := c.Open(t)
	if cfg.Table == "" {
		cfg.Table = "geo.t"
	}
	if cfg.Seed == 0 {
		cfg.Seed = 7
	}
	if _, err := bench.Generate(t.Context(), cat, cfg); err != nil {
		t.Fatal(err)
	}
	return cat, cfg.Table
}

func mustLoad(t testing.TB, cat catalog.Catalog, name string) *table.Table {
	t.Helper()
	tbl, err := catalogs.LoadTable(t.Context(), cat, name)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// tableFiles lists the live data files of the current snapshot.
func tableFiles(t testing.TB, tbl *table.Table) []table.FileScanTask {
	t.Helper()
	tasks, err := tbl.Scan().PlanFiles(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return tasks
}

// tableDigest reads every row of the table (deletes applied).
func tableDigest(t testing.TB, tbl *table.Table) verify.Digest {
	t.Helper()
	d := verify.NewDigest()
	sc, recs, err := tbl.Scan().ToArrowRecords(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	geom, bbox := -1, [4]int{-1, -1, -1, -1}
	for i, n := range []string{"bbox_minx", "bbox_miny", "bbox_maxx", "bbox_maxy"} {
		if idx := sc.FieldIndices(n); len(idx) > 0 {
			bbox[i] = idx[0]
		}
	}
	if idx := sc.FieldIndices("geometry"); len(idx) > 0 {
		geom = idx[0]
	}
	for rec, err := range recs {
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Add(rec, geom, bbox); err != nil {
			t.Fatal(err)
		}
		rec.Release()
	}
	return d
}

func rewrite(t testing.TB, cat catalog.Catalog, name string, cfg engine.Request) *engine.Result {
	t.Helper()
	res, err := enginetest.Rewrite(t.Context(), cat, name, cfg)
	if err != nil {
		t.Fatalf("rewrite: %v", err)
	}
	return res
}

func opts(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// checkUnchanged asserts the data survived a rewrite and the new snapshot
// is a replace.
func checkUnchanged(t testing.TB, before verify.Digest, tbl *table.Table) {
	t.Helper()
	after := tableDigest(t, tbl)
	if d := before.Diff(after); d != "" {
		t.Fatalf("data changed: %s", d)
	}
	if op := tbl.CurrentSnapshot().Summary.Operation; op != table.OpReplace {
		t.Fatalf("snapshot operation %q, want replace", op)
	}
}

func TestRewriteBinpackMerges(t *testing.T) {
	eachCatalog(t, func(t *testing.T, c testenv.Catalog) {
		cat, name := newTable(t, c, bench.GenerateConfig{Rows: 4000, Commits: 20})
		before := tableDigest(t, mustLoad(t, cat, name))
		res := rewrite(t, cat, name, engine.Request{})
		if res.RewrittenDataFilesCount != 20 || res.AddedDataFilesCount != 1 {
			t.Fatalf("rewrote %d files into %d, want 20 into 1", res.RewrittenDataFilesCount, res.AddedDataFilesCount)
		}
		if !res.Verified || res.SnapshotsCommitted != 1 || res.NoopReason != "" {
			t.Fatalf("result %+v", res)
		}
		tbl := mustLoad(t, cat, name)
		if n := len(tableFiles(t, tbl)); n != 1 {
			t.Fatalf("%d files after, want 1", n)
		}
		checkUnchanged(t, before, tbl)
		if got := tbl.CurrentSnapshot().Summary.Properties[format.SummaryStrategy]; got != "binpack" {
			t.Fatalf("summary strategy %q", got)
		}
	})
}

func TestRewriteSplitsOversizedFiles(t *testing.T) {
	eachCatalog(t, func(t *testing.T, c testenv.Catalog) {
		cat, name := newTable(t, c, bench.GenerateConfig{Rows: 40000, Commits: 1})
		tbl := mustLoad(t, cat, name)
		size := tableFiles(t, tbl)[0].File.FileSizeBytes()
		before := tableDigest(t, tbl)
		target := size / 6
		res := rewrite(t, cat, name, engine.Request{Options: opts("target-file-size-bytes", fmt.Sprint(target))})
		if res.RewrittenDataFilesCount != 1 || res.AddedDataFilesCount < 5 {
			t.Fatalf("split 1 file of %d bytes into %d files (target %d)", size, res.AddedDataFilesCount, target)
		}
		tbl = mustLoad(t, cat, name)
		files := tableFiles(t, tbl)
		var counts []int64
		for _, f := range files {
			counts = append(counts, f.File.Count())
		}
		// Equal row counts per file, at most one row apart: no tiny tail.
		if slices.Max(counts)-slices.Min(counts) > 1 {
			t.Fatalf("uneven split: rows per file %v", counts)
		}
		checkUnchanged(t, before, tbl)
	})
}

func TestRewriteMinInputFiles(t *testing.T) {
	eachCatalog(t, func(t *testing.T, c testenv.Catalog) {
		for _, tc := range []struct {
			commits int
			noop    bool
		}{{4, true}, {5, false}} {
			t.Run(fmt.Sprintf("%d files", tc.commits), func(t *testing.T) {
				cat, name := newTable(t, c, bench.GenerateConfig{Rows: 1000, Commits: tc.commits})
				res := rewrite(t, cat, name, engine.Request{})
				if tc.noop {
					if res.RewrittenDataFilesCount != 0 || res.SnapshotsCommitted != 0 {
						t.Fatalf("rewrote %d files, want none", res.RewrittenDataFilesCount)
					}
					for _, want := range []string{"4 candidate files", "min-input-files=5", "--option min-input-files=4"} {
						if !strings.Contains(res.NoopReason, want) {
							t.Fatalf("noop reason %q lacks %q", res.NoopReason, want)
						}
					}
					return
				}
				if res.RewrittenDataFilesCount != 5 || res.NoopReason != "" {
					t.Fatalf("rewrote %d files (noop %q), want 5", res.RewrittenDataFilesCount, res.NoopReason)
				}
			})
		}
	})
}

func TestRewriteUnknownOption(t *testing.T) {
	eachCatalog(t, func(t *testing.T, c testenv.Catalog) {
		cat, name := newTable(t, c, bench.GenerateConfig{Rows: 100, Commits: 2})
		_, err := enginetest.Rewrite(t.Context(), cat, name, engine.Request{Options: opts("target-file-size", "10")})
		if err == nil || !strings.Contains(err.Error(), `"target-file-size"`) || !strings.Contains(err.Error(), "target-file-size-bytes") {
			t.Fatalf("error %v should name the option and list valid ones", err)
		}
	})
}

func TestRewriteDryRunWritesNothing(t *testing.T) {
	eachCatalog(t, func(t *testing.T, c testenv.Catalog) {
		cat, name := newTable(t, c, bench.GenerateConfig{Rows: 1000, Commits: 6})
		tbl := mustLoad(t, cat, name)
		snap := tbl.CurrentSnapshot().SnapshotID
		res := rewrite(t, cat, name, engine.Request{Curve: "hilbert", DryRun: true})
		if len(res.Plan.Groups) != 1 || len(res.Plan.Groups[0].Files) != 6 || res.RewrittenDataFilesCount != 0 {
			t.Fatalf("plan %+v, result %+v", res.Plan, res)
		}
		if got := mustLoad(t, cat, name).CurrentSnapshot().SnapshotID; got != snap {
			t.Fatalf("dry run committed snapshot %d", got)
		}
	})
}

// sortedWithin reports whether column col of every file is non-decreasing
// and the files' ranges do not overlap.
func checkLinearOrder(t *testing.T, tbl *table.Table) {
	t.Helper()
	files := tableFiles(t, tbl)
	type span struct{ lo, hi float64 }
	var spans []span
	for _, f := range files {
		_, recs, err := tbl.Scan().ReadTasks(t.Context(), []table.FileScanTask{f})
		if err != nil {
			t.Fatal(err)
		}
		var vals []float64
		for rec, err := range recs {
			if err != nil {
				t.Fatal(err)
			}
			col := rec.Column(rec.Schema().FieldIndices("bbox_minx")[0]).(*array.Float64)
			vals = append(vals, col.Float64Values()...)
			rec.Release()
		}
		if !slices.IsSorted(vals) {
			t.Fatalf("file %s is not sorted by bbox_minx", f.File.FilePath())
		}
		spans = append(spans, span{vals[0], vals[len(vals)-1]})
	}
	slices.SortFunc(spans, func(a, b span) int { return cmpFloat(a.lo, b.lo) })
	for i := 1; i < len(spans); i++ {
		if spans[i].lo < spans[i-1].hi {
			t.Fatalf("files overlap in bbox_minx: %v and %v", spans[i-1], spans[i])
		}
	}
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func TestRewriteSortOrders(t *testing.T) {
	eachCatalog(t, func(t *testing.T, c testenv.Catalog) {
		for _, curve := range []string{"linear", "zorder", "hilbert"} {
			t.Run(curve, func(t *testing.T) {
				cat, name := newTable(t, c, bench.GenerateConfig{Rows: 20000, Commits: 10, Distribution: bench.Clustered})
				tbl := mustLoad(t, cat, name)
				var total int64
				for _, f := range tableFiles(t, tbl) {
					total += f.File.FileSizeBytes()
				}
				before := tableDigest(t, tbl)
				res := rewrite(t, cat, name, engine.Request{Curve: curve, Options: opts("target-file-size-bytes", fmt.Sprint(total/8), "rewrite-all", "true")})
				if res.AddedDataFilesCount < 6 {
					t.Fatalf("added %d files, want about 8", res.AddedDataFilesCount)
				}
				tbl = mustLoad(t, cat, name)
				checkUnchanged(t, before, tbl)
				if got := tbl.CurrentSnapshot().Summary.Properties[format.SummarySortOrder]; got == "" {
					t.Fatal("snapshot summary lacks the sort order")
				}
				if curve == "linear" {
					checkLinearOrder(t, tbl)
				} else {
					checkCurveOrder(t, tbl, curve, before.Extent)
				}
				// Clustering shrinks the files' bboxes: their mean area must be
				// well below the whole extent's, which arrival order covers.
				checkCompactBoxes(t, tbl)
			})
		}
	})
}

// checkCompactBoxes asserts that the mean file bbox covers under a quarter
// of the table extent.
func checkCompactBoxes(t *testing.T, tbl *table.Table) {
	t.Helper()
	cols, err := icebergspatial.Columns(tbl.Schema(), tbl.Properties(), "")
	require.NoError(t, err)
	var sum float64
	files := tableFiles(t, tbl)
	for _, f := range files {
		b, ok := icebergspatial.FileBound(tbl.Schema(), cols, f.File.LowerBoundValues(), f.File.UpperBoundValues())
		require.True(t, ok, "file %s has no bbox statistics", f.File.FilePath())
		sum += (b.MaxX - b.MinX) * (b.MaxY - b.MinY)
	}
	mean := sum / float64(len(files))
	assert.LessOrEqual(t, mean, 0.25*360*180, "mean file bbox area is not much below the extent's")
}

func TestRewritePartitionedWhereUTC(t *testing.T) {
	eachCatalog(t, func(t *testing.T, c testenv.Catalog) {
		cat, name := newTable(t, c, bench.GenerateConfig{Rows: 6000, Commits: 12, PartitionBy: "day(ts)",
			Start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Span: 72 * time.Hour})
		tbl := mustLoad(t, cat, name)
		before := tableDigest(t, tbl)
		byDay := map[string]int{}
		for _, f := range tableFiles(t, tbl) {
			byDay[fmt.Sprint(f.File.Partition())]++
		}
		if len(byDay) != 3 {
			t.Fatalf("files span %d days, want 3", len(byDay))
		}
		res := rewrite(t, cat, name, engine.Request{Curve: "hilbert", Where: "ts >= '2026-01-02' AND ts < '2026-01-03'", Options: opts("min-input-files", "2")})
		if len(res.Plan.Groups) != 1 || !strings.Contains(res.Plan.Groups[0].Partition, "2026-01-02") {
			t.Fatalf("groups %+v, want one for 2026-01-02", res.Plan.Groups)
		}
		tbl = mustLoad(t, cat, name)
		checkUnchanged(t, before, tbl)
		after := map[string]int{}
		for _, f := range tableFiles(t, tbl) {
			after[fmt.Sprint(f.File.Partition())]++
		}
		ones := 0
		for _, n := range after {
			if n == 1 {
				ones++
			}
		}
		if ones != 1 || len(after) != 3 {
			t.Fatalf("files per day after: %v; want one day compacted to 1 file", after)
		}
	})
}

func TestRewritePartitionedNoGroupSpansPartitions(t *testing.T) {
	eachCatalog(t, func(t *testing.T, c testenv.Catalog) {
		cat, name := newTable(t, c, bench.GenerateConfig{Rows: 6000, Commits: 12, PartitionBy: "day(ts)"})
		res := rewrite(t, cat, name, engine.Request{Curve: "zorder", Options: opts("min-input-files", "2")})
		if len(res.Plan.Groups) != 3 {
			t.Fatalf("%d groups, want 3 (one per day)", len(res.Plan.Groups))
		}
		for _, g := range res.Plan.Groups {
			for _, f := range g.Files {
				if f.Partition != g.Partition {
					t.Fatalf("group %s holds a file of %s", g.Partition, f.Partition)
				}
			}
		}
		if n := len(tableFiles(t, mustLoad(t, cat, name))); n != 3 {
			t.Fatalf("%d files after, want 3", n)
		}
	})
}

func TestRewritePartialProgress(t *testing.T) {
	eachCatalog(t, func(t *testing.T, c testenv.Catalog) {
		cat, name := newTable(t, c, bench.GenerateConfig{Rows: 8000, Commits: 16, PartitionBy: "day(ts)", Span: 96 * time.Hour})
		snaps := len(mustLoad(t, cat, name).Metadata().Snapshots())
		res := rewrite(t, cat, name, engine.Request{Options: opts("partial-progress.enabled", "true", "partial-progress.max-commits", "2", "min-input-files", "2")})
		if len(res.Plan.Groups) != 4 || res.SnapshotsCommitted != 2 {
			t.Fatalf("%d groups in %d commits, want 4 in 2", len(res.Plan.Groups), res.SnapshotsCommitted)
		}
		if got := len(mustLoad(t, cat, name).Metadata().Snapshots()); got != snaps+2 {
			t.Fatalf("snapshots %d -> %d, want +2", snaps, got)
		}
	})
}

func TestRewriteV3KeepsLineage(t *testing.T) {
	eachCatalog(t, func(t *testing.T, c testenv.Catalog) {
		cat, name := newTable(t, c, bench.GenerateConfig{Rows: 3000, Commits: 6, FormatVersion: 3})
		before := tableDigest(t, mustLoad(t, cat, name))
		res := rewrite(t, cat, name, engine.Request{Curve: "hilbert"})
		if res.AddedDataFilesCount != 1 {
			t.Fatalf("added %d", res.AddedDataFilesCount)
		}
		checkUnchanged(t, before, mustLoad(t, cat, name))
	})
}

func TestRewriteMergeOnReadDeletes(t *testing.T) {
	eachCatalog(t, func(t *testing.T, c testenv.Catalog) {
		cat, name := newTable(t, c, bench.GenerateConfig{Rows: 2000, Commits: 5,
			Properties: map[string]string{"write.delete.mode": "merge-on-read"}})
		tbl := mustLoad(t, cat, name)
		tbl, err := tbl.Delete(t.Context(), iceberg.LessThan(iceberg.Reference("id"), int64(10)), nil)
		if err != nil {
			t.Fatal(err)
		}
		before := tableDigest(t, tbl)
		if before.Rows != 1990 {
			t.Fatalf("%d rows after delete", before.Rows)
		}
		res := rewrite(t, cat, name, engine.Request{Options: opts("rewrite-all", "true")})
		tbl = mustLoad(t, cat, name)
		checkUnchanged(t, before, tbl)
		for _, f := range tableFiles(t, tbl) {
			if len(f.DeleteFiles)+len(f.DeletionVectorFiles)+len(f.EqualityDeleteFiles) != 0 {
				t.Fatalf("delete files still apply after the rewrite")
			}
		}
		t.Logf("removed %d delete files", res.RemovedDeleteFilesCount)
	})
}

func TestRewriteKeepsConcurrentAppend(t *testing.T) {
	eachCatalog(t, func(t *testing.T, c testenv.Catalog) {
		cat, name := newTable(t, c, bench.GenerateConfig{Rows: 2000, Commits: 5})
		before := tableDigest(t, mustLoad(t, cat, name))
		restore := engine.SetTestHookBeforeCommit(func(ctx context.Context) {
			// Another writer appends between our plan and our commit.
			tbl := mustLoad(t, cat, name)
			rdr := oneRow(t, tbl, 999999)
			defer rdr.Release()
			if _, err := tbl.Append(ctx, rdr, nil); err != nil {
				t.Errorf("concurrent append: %v", err)
			}
		})
		res := rewrite(t, cat, name, engine.Request{})
		restore()
		if res.SnapshotsCommitted != 1 {
			t.Fatalf("result %+v", res)
		}
		after := tableDigest(t, mustLoad(t, cat, name))
		if after.Rows != before.Rows+1 {
			t.Fatalf("rows %d after, want %d (the concurrent append must be kept)", after.Rows, before.Rows+1)
		}
	})
}

func TestRewriteFailedWriteLeavesNoFiles(t *testing.T) {
	eachCatalog(t, func(t *testing.T, c testenv.Catalog) {
		cat, name := newTable(t, c, bench.GenerateConfig{Rows: 2000, Commits: 5})
		tbl := mustLoad(t, cat, name)
		dir := strings.TrimPrefix(tbl.Location(), "file://")
		filesBefore := dirFiles(t, dir)
		restore := engine.SetTestHookBeforeCommit(func(context.Context) { panic("unreachable") })
		defer restore()
		restoreFail := engine.SetTestHookAfterWrite(func() error { return fmt.Errorf("disk full") })
		_, err := enginetest.Rewrite(t.Context(), cat, name, engine.Request{})
		restoreFail()
		if err == nil || !strings.Contains(err.Error(), "disk full") {
			t.Fatalf("error %v, want the injected failure", err)
		}
		if got := dirFiles(t, dir); !slices.Equal(got, filesBefore) {
			t.Fatalf("files changed:\nbefore %v\nafter  %v", filesBefore, got)
		}
	})
}

func dirFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// oneRow returns a reader over a copy of the table's row with the given
// id... or of row 0 when id is absent, as a new row to append.
func oneRow(t testing.TB, tbl *table.Table, _ int64) array.RecordReader {
	t.Helper()
	sc, recs, err := tbl.Scan(table.WithRowFilter(iceberg.EqualTo(iceberg.Reference("id"), int64(0)))).ToArrowRecords(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var rows []arrow.RecordBatch
	for rec, err := range recs {
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, rec)
	}
	rdr, err := array.NewRecordReader(sc, rows)
	if err != nil {
		t.Fatal(err)
	}
	return rdr
}

func TestRewriteRefusesInvalidGeometry(t *testing.T) {
	eachCatalog(t, func(t *testing.T, c testenv.Catalog) {
		cat, name := newTable(t, c, bench.GenerateConfig{Rows: 500, Commits: 5})
		tbl := mustLoad(t, cat, name)
		sc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, false, false)
		if err != nil {
			t.Fatal(err)
		}
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		defer b.Release()
		b.Field(0).(*array.Int64Builder).Append(-1)
		b.Field(1).(*array.TimestampBuilder).Append(0)
		b.Field(2).(*array.Int32Builder).Append(1)
		// POINT header claiming coordinates that are not there.
		b.Field(3).(*array.BinaryBuilder).Append([]byte{1, 1, 0, 0, 0, 0, 0})
		for i := 4; i < 8; i++ {
			b.Field(i).(*array.Float64Builder).Append(1)
		}
		rec := b.NewRecordBatch()
		rdr, err := array.NewRecordReader(sc, []arrow.RecordBatch{rec})
		if err != nil {
			t.Fatal(err)
		}
		if tbl, err = tbl.Append(t.Context(), rdr, nil); err != nil {
			t.Fatal(err)
		}
		snap := tbl.CurrentSnapshot().SnapshotID
		_, err = enginetest.Rewrite(t.Context(), cat, name, engine.Request{Curve: "hilbert"})
		if !errors.Is(err, engine.ErrInvalidData) || !strings.Contains(err.Error(), "wkb.") {
			t.Fatalf("error %v, want an invalid-geometry error naming the check", err)
		}
		if got := mustLoad(t, cat, name).CurrentSnapshot().SnapshotID; got != snap {
			t.Fatal("a refused rewrite committed")
		}
		res := rewrite(t, cat, name, engine.Request{Options: opts("validate-geometry", "false")})
		if res.RewrittenDataFilesCount != 6 {
			t.Fatalf("with validation off, rewrote %d files, want 6", res.RewrittenDataFilesCount)
		}
	})
}

func TestRewriteConcurrentDeleteConflicts(t *testing.T) {
	eachCatalog(t, func(t *testing.T, c testenv.Catalog) {
		cat, name := newTable(t, c, bench.GenerateConfig{Rows: 2000, Commits: 5,
			Properties: map[string]string{"write.delete.mode": "merge-on-read"}})
		tbl := mustLoad(t, cat, name)
		dir := strings.TrimPrefix(tbl.Location(), "file://")
		done := false
		restore := engine.SetTestHookBeforeCommit(func(ctx context.Context) {
			if done {
				return
			}
			done = true
			// Another writer deletes rows from files being rewritten.
			if _, err := mustLoad(t, cat, name).Delete(ctx, iceberg.LessThan(iceberg.Reference("id"), int64(5)), nil); err != nil {
				t.Errorf("concurrent delete: %v", err)
			}
		})
		defer restore()
		before := dirFiles(t, dir+"/data")
		_, err := enginetest.Rewrite(t.Context(), cat, name, engine.Request{Curve: "hilbert"})
		if !catalogs.IsRetryable(err) || !errors.Is(err, catalogs.ErrConflict) {
			t.Fatalf("error %v, want a retryable conflict", err)
		}
		d := tableDigest(t, mustLoad(t, cat, name))
		if d.Rows != 1995 {
			t.Fatalf("%d rows after the conflict, want 1995: deleted rows came back or rows were lost", d.Rows)
		}
		// Only the delete's own files were added under data/.
		deletes := map[string]bool{}
		for _, task := range tableFiles(t, mustLoad(t, cat, name)) {
			for _, d := range task.DeleteFiles {
				deletes[strings.TrimPrefix(d.FilePath(), "file://")] = true
			}
			for _, d := range task.DeletionVectorFiles {
				deletes[strings.TrimPrefix(d.FilePath(), "file://")] = true
			}
		}
		for _, f := range dirFiles(t, dir+"/data") {
			if !slices.Contains(before, f) && !deletes[f] {
				t.Errorf("file %s left behind by the failed rewrite", f)
			}
		}
		restore()
		// A rerun succeeds and keeps the delete.
		rewrite(t, cat, name, engine.Request{Curve: "hilbert", Options: opts("rewrite-all", "true")})
		if d := tableDigest(t, mustLoad(t, cat, name)); d.Rows != 1995 {
			t.Fatalf("%d rows after the rerun, want 1995", d.Rows)
		}
	})
}

// checkCurveOrder asserts that the rows of every file are in curve-key
// order, and that the files' key ranges do not overlap: the order is
// global across the group, not per batch or per file.
func checkCurveOrder(t *testing.T, tbl *table.Table, curve string, extent spatial.Bound) {
	t.Helper()
	order, err := cluster.CurveOrder(curve)
	if err != nil {
		t.Fatal(err)
	}
	type span struct{ lo, hi uint64 }
	var spans []span
	for _, f := range tableFiles(t, tbl) {
		sc, recs, err := tbl.Scan().ReadTasks(t.Context(), []table.FileScanTask{f})
		if err != nil {
			t.Fatal(err)
		}
		sorter, err := cluster.NewSorter(order, sc, cluster.SortOptions{Extent: extent})
		if err != nil {
			t.Fatal(err)
		}
		var keys []uint64
		for rec, err := range recs {
			if err != nil {
				t.Fatal(err)
			}
			k, err := sorter.Keys(rec)
			if err != nil {
				t.Fatal(err)
			}
			keys = append(keys, k...)
			rec.Release()
		}
		if !slices.IsSorted(keys) {
			t.Fatalf("file %s is not in %s order", f.File.FilePath(), curve)
		}
		spans = append(spans, span{keys[0], keys[len(keys)-1]})
	}
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.lo, b.lo) })
	for i := 1; i < len(spans); i++ {
		if spans[i].lo < spans[i-1].hi {
			t.Fatalf("files overlap in %s key: %v and %v", curve, spans[i-1], spans[i])
		}
	}
}

func TestRewriteSortUsesTableSortOrder(t *testing.T) {
	cat, err := catalogs.Open(t.Context(), catalogs.Spec{Warehouse: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if err := cat.CreateNamespace(t.Context(), table.Identifier{"geo"}, nil); err != nil {
		t.Fatal(err)
	}
	sc := bench.Schema(2, true, "OGC:CRS84")
	so, err := table.NewSortOrder(1, []table.SortField{{SourceIDs: []int{1}, Transform: iceberg.IdentityTransform{}, Direction: table.SortDESC, NullOrder: table.NullsLast}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cat.CreateTable(t.Context(), table.Identifier{"geo", "s"}, sc, catalog.WithSortOrder(so)); err != nil {
		t.Fatal(err)
	}
	src, name := newTable(t, testenv.Catalog{Backend: testenv.SQLite}, bench.GenerateConfig{Rows: 600, Commits: 6})
	srcTbl := mustLoad(t, src, name)
	dst := mustLoad(t, cat, "geo.s")
	for _, task := range tableFiles(t, srcTbl) {
		_, recs, err := srcTbl.Scan().ReadTasks(t.Context(), []table.FileScanTask{task})
		if err != nil {
			t.Fatal(err)
		}
		for rec, err := range recs {
			if err != nil {
				t.Fatal(err)
			}
			rdr, _ := array.NewRecordReader(rec.Schema(), []arrow.RecordBatch{rec})
			if dst, err = dst.Append(t.Context(), rdr, nil); err != nil {
				t.Fatal(err)
			}
			rdr.Release()
		}
	}
	res := rewrite(t, cat, "geo.s", engine.Request{Strategy: engine.Sort})
	if res.SortOrder != `id DESC NULLS LAST` || res.AddedDataFilesCount != 1 {
		t.Fatalf("sort order %q, %d files", res.SortOrder, res.AddedDataFilesCount)
	}
	_, recs, err := mustLoad(t, cat, "geo.s").Scan().ToArrowRecords(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for rec, err := range recs {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, rec.Column(0).(*array.Int64).Int64Values()...)
		rec.Release()
	}
	if len(ids) != 600 || !slices.IsSortedFunc(ids, func(a, b int64) int { return cmp.Compare(b, a) }) {
		t.Fatalf("%d rows, not in id DESC order", len(ids))
	}
}

// TestRewritePartialProgressCountsCommittedGroups fails the first (and
// largest) group of a partial-progress rewrite: the error must count the
// groups that did commit, not a prefix of the plan as long as the files
// rewritten.
func TestRewritePartialProgressCountsCommittedGroups(t *testing.T) {
	cat, name := newTable(t, testenv.Catalogs(t)[0], bench.GenerateConfig{Rows: 6000, Commits: 12, PartitionBy: "day(ts)",
		Start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Span: 72 * time.Hour})
	// Append the first day's rows again, several times, so its group holds
	// more files than the other two together.
	for range 6 {
		tbl := mustLoad(t, cat, name)
		_, recs, err := tbl.Scan(table.WithRowFilter(iceberg.LessThan(iceberg.Reference("ts"), "2026-01-02T00:00:00+00:00"))).ToArrowRecords(t.Context())
		require.NoError(t, err)
		var rows []arrow.RecordBatch
		for rec, err := range recs {
			require.NoError(t, err)
			rows = append(rows, rec)
		}
		rdr, err := array.NewRecordReader(rows[0].Schema(), rows)
		require.NoError(t, err)
		_, err = tbl.Append(t.Context(), rdr, nil)
		rdr.Release()
		require.NoError(t, err)
	}
	var calls atomic.Int32
	restore := engine.SetTestHookAfterWrite(func() error {
		if calls.Add(1) == 1 {
			return errors.New("disk full")
		}
		return nil
	})
	defer restore()
	res, err := enginetest.Rewrite(t.Context(), cat, name, engine.Request{Options: opts(
		"partial-progress.enabled", "true", "partial-progress.max-commits", "3", "min-input-files", "2",
		"max-concurrent-file-group-rewrites", "1", "rewrite-job-order", "files-desc")})
	require.Error(t, err)
	require.NotNil(t, res)
	groups := res.Plan.Groups
	require.Len(t, groups, 3)
	require.Greater(t, len(groups[0].Files), len(groups[1].Files)+len(groups[2].Files), "the failing group must be the largest")
	assert.Equal(t, 2, res.SnapshotsCommitted)
	assert.Contains(t, err.Error(), "partial progress: 2 of 3 groups committed")
	assert.ErrorContains(t, err, "disk full")
}

// TestRewriteRemovesEveryDeletionVector checks that a rewrite of a v3 table
// drops the deletion vector of every file it replaces, also when several
// vectors share one Puffin file (as Spark and iceberg-go write them): the
// table is left without delete files, not with dangling vectors.
func TestRewriteRemovesEveryDeletionVector(t *testing.T) {
	c := testenv.Catalogs(t)[0]
	cat, name := newTable(t, c, bench.GenerateConfig{Rows: 3000, Commits: 4, FormatVersion: 3,
		Properties: map[string]string{"write.delete.mode": "merge-on-read"}})
	tbl, err := mustLoad(t, cat, name).Delete(t.Context(), iceberg.LessThan(iceberg.Reference("device_id"), int32(20)), nil)
	require.NoError(t, err)
	dvs := map[string]int{}
	for _, task := range tableFiles(t, tbl) {
		for _, d := range task.DeletionVectorFiles {
			dvs[d.FilePath()]++
		}
	}
	require.Len(t, dvs, 1, "the delete wrote its vectors into one Puffin file")
	vectors := 0
	for _, n := range dvs {
		vectors = n
	}
	require.Greater(t, vectors, 1, "several data files have vectors")
	rows := tableDigest(t, tbl).Rows

	res := rewrite(t, cat, name, engine.Request{Options: opts("rewrite-all", "true")})
	assert.Equal(t, vectors, res.RemovedDeleteFilesCount, "every vector is removed with its file")
	after := mustLoad(t, cat, name)
	assert.Equal(t, "0", after.CurrentSnapshot().Summary.Properties["total-delete-files"])
	assert.Equal(t, rows, tableDigest(t, after).Rows)
}

// TestRewriteEvolvedPartitionSpec checks that files written under an older
// partition spec are rewritten into the current one (as Spark's
// rewrite_data_files does), though their rows arrive in the old spec's
// partitions, not clustered by the new one.
func TestRewriteEvolvedPartitionSpec(t *testing.T) {
	c := testenv.Catalogs(t)[0]
	cat, name := newTable(t, c, bench.GenerateConfig{Rows: 3000, Commits: 4, PartitionBy: "day(ts)"})
	tx := mustLoad(t, cat, name).NewTransaction()
	require.NoError(t, tx.UpdateSpec(true).AddField("device_id", iceberg.BucketTransform{NumBuckets: 4}, "device_bucket").Commit())
	tbl, err := tx.Commit(t.Context())
	require.NoError(t, err)
	spec := tbl.Metadata().DefaultPartitionSpec()
	require.NotZero(t, spec)
	before := tableDigest(t, tbl)

	res := rewrite(t, cat, name, engine.Request{Options: opts("rewrite-all", "true")})
	require.Positive(t, res.AddedDataFilesCount)
	after := mustLoad(t, cat, name)
	assert.Equal(t, before, tableDigest(t, after))
	for _, task := range tableFiles(t, after) {
		assert.EqualValues(t, spec, task.File.SpecID(), "%s is not in the current spec", task.File.FilePath())
	}
}

// TestRewriteCurveWithoutGeometryNamesTheWayOut checks that a curve
// rewrite of a table with neither bbox columns nor a geometry column
// geocompact can find (a WKB column another engine wrote, without
// GeoParquet metadata) is refused with the table property that names the
// column, and commits nothing.
func TestRewriteCurveWithoutGeometryNamesTheWayOut(t *testing.T) {
	cat, err := catalogs.Open(t.Context(), catalogs.Spec{Warehouse: t.TempDir()})
	require.NoError(t, err)
	require.NoError(t, cat.CreateNamespace(t.Context(), table.Identifier{"geo"}, nil))
	sc := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "wkb", Type: iceberg.PrimitiveTypes.Binary})
	tbl, err := cat.CreateTable(t.Context(), table.Identifier{"geo", "bare"}, sc)
	require.NoError(t, err)
	asc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "wkb", Type: arrow.BinaryTypes.Binary, Nullable: true}}, nil)
	for i := range 3 {
		b := array.NewRecordBuilder(memory.DefaultAllocator, asc)
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.BinaryBuilder).Append([]byte{1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
		rec := b.NewRecordBatch()
		rdr, _ := array.NewRecordReader(asc, []arrow.RecordBatch{rec})
		tbl, err = tbl.Append(t.Context(), rdr, nil)
		require.NoError(t, err)
		rdr.Release()
		rec.Release()
		b.Release()
	}
	snap := tbl.CurrentSnapshot().SnapshotID
	_, err = enginetest.Rewrite(t.Context(), cat, "geo.bare", engine.Request{Curve: "hilbert", Options: opts("rewrite-all", "true")})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `no column "bbox_minx"`)
	assert.Contains(t, err.Error(), spatial.PropGeometryColumn)
	assert.Equal(t, snap, mustLoad(t, cat, "geo.bare").CurrentSnapshot().SnapshotID)
}
