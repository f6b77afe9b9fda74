package engine_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/delta/deltatest"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/internal/testing/icebergtest"
	"github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/deltatable"
)

// rowGroupRows returns the rows of each row group of the local Parquet
// file at path.
func rowGroupRows(t *testing.T, path string) []int64 {
	t.Helper()
	r, err := file.OpenParquetFile(strings.TrimPrefix(path, "file://"), false)
	require.NoError(t, err)
	defer r.Close()
	out := make([]int64, r.NumRowGroups())
	for i := range out {
		out[i] = r.MetaData().RowGroup(i).NumRows()
	}
	return out
}

// assertCut checks that every file of rows rows holds row groups of
// limit rows, the last of it holding the rest.
func assertCut(t *testing.T, groups []int64, limit int64) {
	t.Helper()
	require.NotEmpty(t, groups)
	for i, n := range groups[:len(groups)-1] {
		assert.Equal(t, limit, n, "row group %d", i)
	}
	assert.LessOrEqual(t, groups[len(groups)-1], limit)
}

// TestSortedFilesCutRowGroups rewrites with a curve: each file is cut into
// about sixteen row groups, each a stretch of the order; a bin-packed file,
// and one of a table that sets its own row-group limit, keep the table's
// row groups. It is not parallel: it lowers the fewest bytes of a row
// group so that small files are cut.
func TestSortedFilesCutRowGroups(t *testing.T) {
	defer engine.SetMinRowGroupBytes(1)()
	for _, tc := range []struct {
		name  string
		props map[string]string
		req   engine.Request
		cut   bool
	}{
		{"hilbert", nil, engine.Request{Curve: "hilbert"}, true},
		{"table limit", map[string]string{"write.parquet.row-group-limit": "1000000"}, engine.Request{Curve: "hilbert"}, false},
		{"binpack", nil, engine.Request{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cat, name := icebergtest.NewTable(t, icebergtest.SQLite(t), bench.GenerateConfig{Rows: 8000, Commits: 8, Properties: tc.props})
			before := icebergtest.Digest(t, icebergtest.Load(t, cat, name))
			req := tc.req
			req.Options = icebergtest.Opts("rewrite-all", "true", "target-file-size-bytes", "1048576")
			res := icebergtest.Rewrite(t, cat, name, req)
			require.True(t, res.Verified)
			tbl := icebergtest.Load(t, cat, name)
			icebergtest.CheckUnchanged(t, before, tbl)
			for _, task := range icebergtest.Files(t, tbl) {
				groups := rowGroupRows(t, task.File.FilePath())
				if !tc.cut {
					assert.Len(t, groups, 1, task.File.FilePath())
					continue
				}
				limit := (task.File.Count() + 15) / 16
				assert.GreaterOrEqual(t, len(groups), 15, task.File.FilePath())
				assertCut(t, groups, limit)
			}
		})
	}
}

// TestSortedDeltaFilesCutRowGroups is TestSortedFilesCutRowGroups on a
// Delta table, whose writer otherwise writes a row group per batch.
func TestSortedDeltaFilesCutRowGroups(t *testing.T) {
	defer engine.SetMinRowGroupBytes(1)()
	dir := t.TempDir()
	deltatest.Fragmented(t, dir, 8, 500, deltatest.Options{})
	tbl, err := deltatable.OpenLocation(t.Context(), dir, table.ForWrite)
	require.NoError(t, err)
	res, err := engine.Rewrite(t.Context(), tbl, engine.Request{Curve: "hilbert", Options: map[string]string{"min-input-files": "2"}})
	require.NoError(t, err)
	require.True(t, res.Verified)
	require.Equal(t, 1, res.AddedDataFilesCount)
	after, err := deltatable.OpenLocation(t.Context(), dir, table.ForRead)
	require.NoError(t, err)
	require.Len(t, after.Files, 1)
	groups := rowGroupRows(t, filepath.Join(dir, after.Files[0].Path))
	assert.Len(t, groups, 16)
	assertCut(t, groups, 250)
}

// TestBinPackedDeltaFilesHoldWholeRowGroups bin-packs a Delta table of
// eight files: the file written holds its rows in one row group, not a
// row group per batch read.
func TestBinPackedDeltaFilesHoldWholeRowGroups(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	deltatest.Fragmented(t, dir, 8, 500, deltatest.Options{})
	tbl, err := deltatable.OpenLocation(t.Context(), dir, table.ForWrite)
	require.NoError(t, err)
	res, err := engine.Rewrite(t.Context(), tbl, engine.Request{Options: map[string]string{"min-input-files": "2"}})
	require.NoError(t, err)
	require.True(t, res.Verified)
	require.Equal(t, 1, res.AddedDataFilesCount)
	after, err := deltatable.OpenLocation(t.Context(), dir, table.ForRead)
	require.NoError(t, err)
	require.Len(t, after.Files, 1)
	assert.Equal(t, []int64{4000}, rowGroupRows(t, filepath.Join(dir, after.Files[0].Path)))
}
