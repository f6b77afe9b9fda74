package deltatable_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/alter"
	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/delta/deltatest"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/internal/testing/enginetest"
	"github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/deltatable"
	"github.com/geocompact/geocompact/table/layouts"
	"github.com/geocompact/geocompact/table/optval"
)

// smallDeltaTable is a spatial Delta table of four one-file appends.
func smallDeltaTable(t *testing.T) (*delta.Table, string) {
	t.Helper()
	dir := t.TempDir()
	return deltatest.Fragmented(t, dir, 4, 50, deltatest.Options{}), dir
}

// openedForWrite is the Delta table at dir, opened as the alter command opens
// it.
func openedForWrite(t *testing.T, dir string) table.Table {
	t.Helper()
	d, err := deltatable.OpenLocation(t.Context(), dir, table.ForWrite)
	require.NoError(t, err)
	return d
}

// TestAlter records a curve and Delta's target file size, a rewrite
// without layout flags follows the recorded layout, and unsetting the
// layout leaves the table without one.
func TestAlter(t *testing.T) {
	tbl, dir := smallDeltaTable(t)
	res, err := alter.Apply(t.Context(), openedForWrite(t, dir), alter.Request{Curve: "hilbert",
		Set: map[string]string{delta.PropTargetFileSize: "1MiB", "team": "maps"}})
	require.NoError(t, err)
	assert.Equal(t, layouts.Record{Text: "hilbert()", Source: layouts.FromProperty}, res.Layout)
	require.NotNil(t, res.Version)
	assert.Equal(t, int64(5), *res.Version)
	s := deltatest.Snapshot(t, tbl)
	assert.Equal(t, "1048576", s.Metadata.Configuration[delta.PropTargetFileSize], "sizes are stored in bytes")
	assert.Equal(t, "hilbert()", s.Metadata.Configuration[layouts.Prop])
	assert.Equal(t, "maps", s.Metadata.Configuration["team"])
	assert.Equal(t, "SET TBLPROPERTIES", s.CommitInfo.Operation)

	rows := deltatest.LiveRows(t, tbl)
	rw, err := enginetest.RewriteDelta(t.Context(), dir, engine.Request{Options: map[string]string{"rewrite-all": "true"}})
	require.NoError(t, err)
	assert.Equal(t, layouts.FromProperty, rw.LayoutSource)
	assert.Equal(t, "hilbert()", rw.SortOrder)
	assert.True(t, rw.Verified, rw.NoopReason)
	assert.Equal(t, 1, rw.AddedDataFilesCount)
	assert.Equal(t, rows, deltatest.LiveRows(t, tbl))

	res, err = alter.Apply(t.Context(), openedForWrite(t, dir), alter.Request{Unset: []string{layouts.Prop, "team"}})
	require.NoError(t, err)
	assert.Empty(t, res.Layout.Text)
	s = deltatest.Snapshot(t, tbl)
	assert.Equal(t, "UNSET TBLPROPERTIES", s.CommitInfo.Operation)
	assert.Equal(t, map[string]string{delta.PropTargetFileSize: "1048576"}, s.Metadata.Configuration)

	res, err = alter.Apply(t.Context(), openedForWrite(t, dir), alter.Request{SortOrder: "bbox_minx, id DESC"})
	require.NoError(t, err)
	assert.Equal(t, "bbox_minx ASC NULLS FIRST, id DESC NULLS LAST", res.Layout.Text, "a plain order is kept in the property too")
}

// TestAlterRefusals: protocol properties, Iceberg's target size
// key and a layout over missing columns are refused, naming the fix, and
// nothing is committed.
func TestAlterRefusals(t *testing.T) {
	tbl, dir := smallDeltaTable(t)
	v := deltatest.Snapshot(t, tbl).Version
	for _, tc := range []struct {
		req  alter.Request
		want string
	}{
		{alter.Request{Set: map[string]string{"delta.enableDeletionVectors": "true"}}, `needs the table feature "deletionVectors"`},
		{alter.Request{Set: map[string]string{"delta.columnMapping.mode": "name"}}, `needs the table feature "columnMapping"`},
		{alter.Request{Unset: []string{"delta.appendOnly"}}, `needs the table feature "appendOnly"`},
		{alter.Request{Set: map[string]string{table.PropTargetFileSize: "128MiB"}}, "target file size is delta.targetFileSize"},
		{alter.Request{Set: map[string]string{"delta.targetFileSiz": "1"}}, "did you mean delta.targetFileSize?"},
		{alter.Request{Set: map[string]string{delta.PropTargetFileSize: "big"}}, "delta.targetFileSize"},
		{alter.Request{SortOrder: "bbox_minx, nope"}, "its columns are id, geometry, bbox_minx"},
		{alter.Request{SortOrder: "hilbert(id)"}, "hilbert"},
		{alter.Request{Set: map[string]string{layouts.Prop: "zorder(nope, id)"}}, "has no column \"nope\""},
	} {
		_, err := alter.Apply(t.Context(), openedForWrite(t, dir), tc.req)
		require.ErrorIs(t, err, optval.ErrBad, "%+v", tc.req)
		assert.Contains(t, err.Error(), tc.want, "%+v", tc.req)
	}
	assert.Equal(t, v, deltatest.Snapshot(t, tbl).Version, "nothing was committed")
}

// TestAlterUnsorted removes the recorded layout, keeps the other
// properties, and a rewrite without layout flags then bin-packs; with a
// layout it is refused and nothing is committed.
func TestAlterUnsorted(t *testing.T) {
	tbl, dir := smallDeltaTable(t)
	_, err := alter.Apply(t.Context(), openedForWrite(t, dir), alter.Request{Curve: "hilbert", Set: map[string]string{"team": "maps"}})
	require.NoError(t, err)
	v := deltatest.Snapshot(t, tbl).Version

	_, err = alter.Apply(t.Context(), openedForWrite(t, dir), alter.Request{Unsorted: true, SortOrder: "id"})
	require.ErrorIs(t, err, optval.ErrBad)
	require.ErrorIs(t, alter.Validate(t.Context(), openedForWrite(t, dir), alter.Request{Unsorted: true, Curve: "zorder"}), optval.ErrBad)
	assert.Equal(t, v, deltatest.Snapshot(t, tbl).Version, "nothing was committed")

	require.NoError(t, alter.Validate(t.Context(), openedForWrite(t, dir), alter.Request{Unsorted: true}))
	assert.Equal(t, v, deltatest.Snapshot(t, tbl).Version, "validation commits nothing")
	res, err := alter.Apply(t.Context(), openedForWrite(t, dir), alter.Request{Unsorted: true})
	require.NoError(t, err)
	assert.Equal(t, layouts.Record{}, res.Layout)
	assert.Equal(t, []string{layouts.Prop}, res.Unset)
	assert.Equal(t, map[string]string{"team": "maps"}, deltatest.Snapshot(t, tbl).Metadata.Configuration)

	rw, err := enginetest.RewriteDelta(t.Context(), dir, engine.Request{Options: map[string]string{"rewrite-all": "true"}})
	require.NoError(t, err)
	assert.Equal(t, layouts.FromDefault, rw.LayoutSource)
	assert.Equal(t, string(engine.BinPack), rw.Strategy)
}
