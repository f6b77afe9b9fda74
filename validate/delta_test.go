package validate_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/delta/deltatest"
	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/validate"
)

// brokenPoint is a point whose WKB lacks its y coordinate.
func brokenPoint(t testing.TB) deltatest.Row {
	r := deltatest.Point(t, 3, 4)
	r.WKB = r.WKB[:len(r.WKB)-8]
	return r
}

func TestDeltaValid(t *testing.T) {
	for _, opts := range []deltatest.Options{{Partitioned: true}, {Covering: true, ColumnMapping: "name"}} {
		dir := t.TempDir()
		tbl := deltatest.Create(t, dir, opts)
		deltatest.Append(t, tbl,
			deltatest.WriteFile(t, tbl, "a.parquet", "x", 0, deltatest.Point(t, 1, 2), deltatest.Point(t, 3, 4)),
			deltatest.WriteFile(t, tbl, "b.parquet", "y", 2, deltatest.Point(t, -1, 0)))
		rep, err := checkDelta(t, tbl, dir)
		require.NoError(t, err)
		assert.True(t, rep.OK(), "%+v", rep.Total)
		assert.Equal(t, int64(3), rep.Total.Rows)
		assert.Equal(t, int64(1), rep.SnapshotID)
		require.Len(t, rep.Files, 2)
		g := rep.Files[0].Geometry
		require.NotNil(t, g)
		assert.Equal(t, "geometry", g.Column)
		assert.Equal(t, []string{"Point"}, g.Types)
	}
}

func TestDeltaBrokenGeometry(t *testing.T) {
	dir := t.TempDir()
	tbl := deltatest.Create(t, dir, deltatest.Options{})
	wrongBox := deltatest.Point(t, 5, 5)
	wrongBox.Box = spatial.Bound{MinX: 0, MinY: 0, MaxX: 1, MaxY: 1}
	deltatest.Append(t, tbl,
		deltatest.WriteFile(t, tbl, "good.parquet", "", 0, deltatest.Point(t, 1, 2)),
		deltatest.WriteFile(t, tbl, "bad.parquet", "", 1, deltatest.Point(t, 1, 2), brokenPoint(t), wrongBox))
	rep, err := checkDelta(t, tbl, dir)
	require.NoError(t, err)
	assert.False(t, rep.OK())
	assert.Equal(t, int64(1), rep.Total.Counts[validate.CodeTruncated])
	assert.Equal(t, int64(1), rep.Total.Counts[validate.CodeBBoxMismatch])
	require.Len(t, rep.Files, 2)
	bad := rep.Files[0]
	assert.Equal(t, "bad.parquet", bad.Path, "files in path order")
	require.NotEmpty(t, bad.Examples)
	assert.Equal(t, int64(1), bad.Examples[0].Row)
	assert.Equal(t, validate.CodeTruncated, bad.Examples[0].Code)
	assert.True(t, rep.Files[1].OK())
}

func TestDeltaDeletionVectorHidesBrokenRow(t *testing.T) {
	dir := t.TempDir()
	tbl := deltatest.Create(t, dir, deltatest.Options{ColumnMapping: "name"})
	add := deltatest.WriteFile(t, tbl, "a.parquet", "", 0, deltatest.Point(t, 1, 2), brokenPoint(t), deltatest.Point(t, 3, 4))
	deltatest.Append(t, tbl, add)
	rep, err := checkDelta(t, tbl, dir)
	require.NoError(t, err)
	require.False(t, rep.OK(), "the broken row is live")

	deltatest.DeleteRows(t, tbl, add, 1)
	rep, err = checkDelta(t, tbl, dir)
	require.NoError(t, err)
	assert.True(t, rep.OK(), "%+v", rep.Total)
	assert.Equal(t, int64(2), rep.Total.Rows)
}

func TestDeltaTableProblems(t *testing.T) {
	t.Run("no geometry column", func(t *testing.T) {
		dir := t.TempDir()
		tbl := deltatest.Create(t, dir, deltatest.Options{Properties: map[string]string{spatial.PropGeometryColumn: "shape"}})
		rep, err := checkDelta(t, tbl, dir)
		require.NoError(t, err)
		assert.False(t, rep.OK())
		require.NotEmpty(t, rep.Metadata.Examples)
		assert.Contains(t, rep.Metadata.Examples[0].Detail, `"shape"`)
	})
	t.Run("corrupt file", func(t *testing.T) {
		dir := t.TempDir()
		tbl := deltatest.Create(t, dir, deltatest.Options{})
		deltatest.Append(t, tbl, deltatest.WriteFile(t, tbl, "a.parquet", "", 0, deltatest.Point(t, 1, 2)))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "a.parquet"), []byte("not parquet"), 0o644))
		rep, err := checkDelta(t, tbl, dir)
		require.NoError(t, err)
		assert.Equal(t, int64(1), rep.Total.Counts[validate.CodeCorrupt])
	})
	t.Run("missing file", func(t *testing.T) {
		dir := t.TempDir()
		tbl := deltatest.Create(t, dir, deltatest.Options{})
		deltatest.Append(t, tbl, deltatest.WriteFile(t, tbl, "a.parquet", "", 0, deltatest.Point(t, 1, 2)))
		require.NoError(t, os.Remove(filepath.Join(dir, "a.parquet")))
		_, err := checkDelta(t, tbl, dir)
		require.ErrorIs(t, err, os.ErrNotExist)
		assert.Contains(t, err.Error(), "a.parquet")
	})
}
