package engine_test

import (
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/internal/testing/testenv"
)

func TestRewriteMergeOnReadDeletes(t *testing.T) {
	t.Parallel()
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

// TestRewriteRemovesEveryDeletionVector checks that a rewrite of a v3 table
// drops the deletion vector of every file it replaces, also when several
// vectors share one Puffin file (as Spark and iceberg-go write them): the
// table is left without delete files, not with dangling vectors.
func TestRewriteRemovesEveryDeletionVector(t *testing.T) {
	t.Parallel()
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
