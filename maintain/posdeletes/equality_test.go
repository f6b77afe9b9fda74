package posdeletes_test

import (
	"context"
	"iter"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/maintain/posdeletes"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/table/icebergtable"
)

var convert = map[string]string{posdeletes.OptConvertEquality: "true"}

// rowsWhere reads the rows of the table matching filter, all columns or
// the fields given, as one batch per file.
func rowsWhere(t *testing.T, tbl *table.Table, filter iceberg.BooleanExpression, fields ...string) []arrow.RecordBatch {
	t.Helper()
	opts := []table.ScanOption{table.WithRowFilter(filter)}
	if len(fields) > 0 {
		opts = append(opts, table.WithSelectedFields(fields...))
	}
	_, recs, err := tbl.Scan(opts...).ToArrowRecords(t.Context())
	require.NoError(t, err)
	var out []arrow.RecordBatch
	for rec, err := range recs {
		require.NoError(t, err)
		if rec.NumRows() > 0 {
			out = append(out, rec)
		}
	}
	require.NotEmpty(t, out)
	return out
}

func batches(recs []arrow.RecordBatch) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		for _, r := range recs {
			if !yield(r, nil) {
				return
			}
		}
	}
}

// deleteByID commits an equality delete on id of the rows filter matches.
func deleteByID(t *testing.T, cat catalog.Catalog, filter iceberg.BooleanExpression) {
	t.Helper()
	tbl := load(t, cat)
	keys := rowsWhere(t, tbl, filter, "id", "device_id")
	f, ok := tbl.Schema().FindFieldByName("id")
	require.True(t, ok)
	tx := tbl.NewTransaction()
	require.NoError(t, tx.CommitEqualityDeletes(t.Context(), []int{f.ID}, batches(keys), nil))
	_, err := tx.Commit(t.Context())
	require.NoError(t, err)
}

func idIn(ids ...int64) iceberg.BooleanExpression {
	return iceberg.IsIn(iceberg.Reference("id"), ids...)
}

// TestConvertEqualityDeletes resolves equality deletes into positions: the
// rows they hid stay hidden, rows appended after them with the same keys
// stay visible, and no equality delete file is left.
func TestConvertEqualityDeletes(t *testing.T) {
	t.Parallel()
	for _, version := range []int{2, 3} {
		cat, name, _ := morTable(t, version, idBelow(3))
		again := rowsWhere(t, load(t, cat), idIn(7, 8))
		deleteByID(t, cat, idIn(7, 8, 1500, 2999))
		deleteByID(t, cat, idIn(40))
		// The rows of ids 7 and 8 arrive again after the delete: it does
		// not apply to them.
		_, err := load(t, cat).Append(t.Context(), mustReader(t, again), nil)
		require.NoError(t, err)
		tbl := load(t, cat)
		before, ids := deletesOf(t, tbl), liveIDs(t, tbl)
		require.Positive(t, before.equality)
		require.Contains(t, ids, int64(7))
		require.NotContains(t, ids, int64(1500))

		res, err := posdeletes.Rewrite(t.Context(), cat, name, posdeletes.Config{Options: convert})
		require.NoError(t, err, "v%d", version)
		after := load(t, cat)
		got := deletesOf(t, after)
		assert.Zero(t, got.equality, "v%d: no equality delete file is left", version)
		assert.Equal(t, ids, liveIDs(t, after), "v%d: readers see the same rows", version)
		assert.Equal(t, before.equality, res.EqualityDeleteFilesConverted, "v%d", version)
		assert.Equal(t, table.OpReplace, after.CurrentSnapshot().Summary.Operation, "v%d: the equality delete files go in a replace", version)
		assert.Equal(t, before.data, got.data, "data files are not touched")
		if version == 3 {
			assert.Zero(t, got.parquet)
			for f, n := range got.vectorTargets {
				assert.LessOrEqual(t, n, 1, "data file %s has %d vectors", f, n)
			}
		}
	}
}

func mustReader(t *testing.T, recs []arrow.RecordBatch) array.RecordReader {
	t.Helper()
	rdr, err := array.NewRecordReader(recs[0].Schema(), recs)
	require.NoError(t, err)
	return rdr
}

// TestConvertEqualityLosesToConcurrentRewrite has a data rewrite commit
// between the resolution and the commit: the files the delete applied to
// changed, so the conversion commits nothing and deletes what it wrote.
func TestConvertEqualityLosesToConcurrentRewrite(t *testing.T) {
	t.Parallel()
	cat, name, wh := morTable(t, 2)
	deleteByID(t, cat, idIn(7, 1500))
	list := files(t, wh)
	var snap int64
	cfg := posdeletes.Config{Options: convert, BeforeCommit: func(context.Context) {
		ctx := t.Context()
		tt, err := icebergtable.Open(ctx, cat, name)
		require.NoError(t, err)
		_, err = engine.Rewrite(ctx, tt, engine.Request{Options: map[string]string{"rewrite-all": "true"}})
		require.NoError(t, err)
		snap = load(t, cat).CurrentSnapshot().SnapshotID
	}}
	_, err := posdeletes.Rewrite(t.Context(), cat, name, cfg)
	require.ErrorIs(t, err, catalogs.ErrConflict)
	assert.Equal(t, snap, load(t, cat).CurrentSnapshot().SnapshotID)
	for _, f := range files(t, wh) {
		assert.NotContains(t, f, "-deletes.parquet", "the conversion's files are deleted")
	}
	assert.NotEmpty(t, list)
}

func TestConvertEqualityRefusesWhere(t *testing.T) {
	t.Parallel()
	cat, name, _ := morTable(t, 2)
	deleteByID(t, cat, idIn(7))
	_, err := posdeletes.Rewrite(t.Context(), cat, name, posdeletes.Config{Options: convert, Where: "id < 5"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "convert-equality-deletes resolves every equality delete file")
}
