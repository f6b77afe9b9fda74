package engine_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/internal/testing/enginetest"
	"github.com/geocompact/geocompact/internal/testing/testenv"
	"github.com/geocompact/geocompact/table/catalogs"
)

func TestRewriteKeepsConcurrentAppend(t *testing.T) {
	t.Parallel()
	eachCatalog(t, func(t *testing.T, c testenv.Catalog) {
		cat, name := newTable(t, c, bench.GenerateConfig{Rows: 2000, Commits: 5})
		before := tableDigest(t, mustLoad(t, cat, name))
		ctx := engine.WithTestHooks(t.Context(), engine.TestHooks{BeforeCommit: func(context.Context) {
			// Another writer appends between our plan and our commit. It
			// is another process: its commit is not the rewrite's, so it
			// runs under the test's context, not the commit's.
			tbl := mustLoad(t, cat, name)
			rdr := oneRow(t, tbl, 999999)
			defer rdr.Release()
			if _, err := tbl.Append(t.Context(), rdr, nil); err != nil {
				t.Errorf("concurrent append: %v", err)
			}
		}})
		res, err := enginetest.Rewrite(ctx, cat, name, engine.Request{})
		require.NoError(t, err)
		if res.SnapshotsCommitted != 1 {
			t.Fatalf("result %+v", res)
		}
		after := tableDigest(t, mustLoad(t, cat, name))
		if after.Rows != before.Rows+1 {
			t.Fatalf("rows %d after, want %d (the concurrent append must be kept)", after.Rows, before.Rows+1)
		}
	})
}

func TestRewriteConcurrentDeleteConflicts(t *testing.T) {
	t.Parallel()
	eachCatalog(t, func(t *testing.T, c testenv.Catalog) {
		cat, name := newTable(t, c, bench.GenerateConfig{Rows: 2000, Commits: 5,
			Properties: map[string]string{"write.delete.mode": "merge-on-read"}})
		tbl := mustLoad(t, cat, name)
		dir := strings.TrimPrefix(tbl.Location(), "file://")
		done := false
		ctx := engine.WithTestHooks(t.Context(), engine.TestHooks{BeforeCommit: func(context.Context) {
			if done {
				return
			}
			done = true
			// Another writer (another process, so under the test's
			// context) deletes rows from files being rewritten.
			if _, err := mustLoad(t, cat, name).Delete(t.Context(), iceberg.LessThan(iceberg.Reference("id"), int64(5)), nil); err != nil {
				t.Errorf("concurrent delete: %v", err)
			}
		}})
		before := dirFiles(t, dir+"/data")
		_, err := enginetest.Rewrite(ctx, cat, name, engine.Request{Curve: "hilbert"})
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
		// A rerun succeeds and keeps the delete.
		rewrite(t, cat, name, engine.Request{Curve: "hilbert", Options: opts("rewrite-all", "true")})
		if d := tableDigest(t, mustLoad(t, cat, name)); d.Rows != 1995 {
			t.Fatalf("%d rows after the rerun, want 1995", d.Rows)
		}
	})
}

func TestRewriteFailedWriteLeavesNoFiles(t *testing.T) {
	t.Parallel()
	eachCatalog(t, func(t *testing.T, c testenv.Catalog) {
		cat, name := newTable(t, c, bench.GenerateConfig{Rows: 2000, Commits: 5})
		tbl := mustLoad(t, cat, name)
		dir := strings.TrimPrefix(tbl.Location(), "file://")
		filesBefore := dirFiles(t, dir)
		ctx := engine.WithTestHooks(t.Context(), engine.TestHooks{
			BeforeCommit: func(context.Context) { panic("unreachable") },
			AfterWrite:   func() error { return fmt.Errorf("disk full") },
		})
		_, err := enginetest.Rewrite(ctx, cat, name, engine.Request{})
		if err == nil || !strings.Contains(err.Error(), "disk full") {
			t.Fatalf("error %v, want the injected failure", err)
		}
		if got := dirFiles(t, dir); !slices.Equal(got, filesBefore) {
			t.Fatalf("files changed:\nbefore %v\nafter  %v", filesBefore, got)
		}
	})
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
	t.Parallel()
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
