package deltatable_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/delta/deltatest"
	"github.com/geocompact/geocompact/maintain"
	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/deltatable"
	"github.com/geocompact/geocompact/table/layouts"
)

// opened describes the latest version of tbl, as maintain takes it.
func opened(t *testing.T, tbl *delta.Table) table.Table {
	t.Helper()
	ft, err := deltatable.Open(t.Context(), tbl, "t", table.ForRead)
	require.NoError(t, err)
	return ft
}

// openedAt describes the latest version of the Delta table at dir, as
// maintain takes it.
func openedAt(t *testing.T, dir string) table.Table {
	t.Helper()
	ft, err := deltatable.OpenLocation(t.Context(), dir, table.ForRead)
	require.NoError(t, err)
	return ft
}

// TestMeasure: a Delta table's figures come from its log: files, bytes and
// records from the add actions, its deletion vectors, the versions in the
// log, and the layout figures from the files' bbox statistics.
func TestMeasure(t *testing.T) {
	t.Parallel()
	for _, opts := range []deltatest.Options{{}, {Covering: true, ColumnMapping: "name"}} {
		tbl := deltatest.Create(t, t.TempDir(), opts)
		p := func(x, y float64) deltatest.Row { return deltatest.Point(t, x, y) }
		a := deltatest.WriteFile(t, tbl, "a.parquet", "", 0, p(0, 0), p(1, 1))         // [0 0 1 1]
		b := deltatest.WriteFile(t, tbl, "b.parquet", "", 2, p(2, 2), p(3, 3))         // [2 2 3 3]
		c := deltatest.WriteFile(t, tbl, "c.parquet", "", 4, p(0.5, 0.5), p(2.5, 2.5)) // [.5 .5 2.5 2.5]
		d := deltatest.WriteFile(t, tbl, "d.parquet", "", 6, p(9, 9))
		d.Stats = "" // no statistics: planned for every window
		deltatest.Append(t, tbl, a, b, c, d)
		deltatest.DeleteRows(t, tbl, b, 0)

		windows := []spatial.Bound{{MinX: 0, MinY: 0, MaxX: 0.6, MaxY: 0.6}, {MinX: 10, MinY: 10, MaxX: 11, MaxY: 11}}
		m, err := maintain.Measure(t.Context(), opened(t, tbl), maintain.MeasureConfig{Windows: windows})
		require.NoError(t, err)
		assert.Equal(t, int64(4), m.FileCount)
		assert.Equal(t, a.Size+b.Size+c.Size+d.Size, m.TotalBytes)
		assert.Equal(t, int64(6), m.TotalRecords, "d has no stats, so no record count; deletes are not subtracted")
		assert.Equal(t, int64(1), m.DeleteFileCount, "one file carries a deletion vector")
		// The vector deletes one of the table's 6 counted records.
		require.NotNil(t, m.Deletes)
		assert.Equal(t, maintain.DeleteDebt{DeletionVectors: 1, DeletedRecords: 1, DeleteBytes: m.Deletes.DeleteBytes,
			DeletedFraction: 1.0 / 6}, *m.Deletes)
		assert.Positive(t, m.Deletes.DeleteBytes)
		assert.Equal(t, 3, m.SnapshotCount)
		assert.Zero(t, m.ManifestCount)
		require.Len(t, m.Partitions, 1)
		assert.Equal(t, m.Deletes, m.Partitions[0].Deletes, "the one partition holds the table's debt")
		l := m.Partitions[0].Layout
		require.NotNil(t, l, "%+v", opts)
		assert.Equal(t, int64(1), l.FilesWithoutBounds)
		assert.Equal(t, 3, l.MaxOverlapDepth)
		require.NotNil(t, l.MeanFilesPlanned)
		// The first window plans a, c and d; the second only d.
		assert.InDelta(t, 2.0, *l.MeanFilesPlanned, 1e-9)
	}
}

// TestMeasureRowGroups: the row-group figures of a Delta table come
// from its files' footers, through its physical column names. Partition
// s holds a file of four row groups cut along the diagonal, u the same
// points interleaved, so every row group spans most of the file, and n
// the sorted file written without Parquet statistics: its row groups'
// boxes are unknown (not 0) and a window reads them all.
func TestMeasureRowGroups(t *testing.T) {
	t.Parallel()
	for _, opts := range []deltatest.Options{{Partitioned: true}, {Partitioned: true, Covering: true, ColumnMapping: "name"}} {
		tbl := deltatest.Create(t, t.TempDir(), opts)
		var sorted, interleaved []deltatest.Row
		for i := range 8 {
			sorted = append(sorted, deltatest.Point(t, float64(i), float64(i)))
			j := float64(i / 2)
			if i%2 == 1 {
				j = 7 - j
			}
			interleaved = append(interleaved, deltatest.Point(t, j, j)) // 0 7 1 6 2 5 3 4
		}
		pairs := parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(2))
		bare := parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(2), parquet.WithStats(false))
		deltatest.Append(t, tbl,
			deltatest.WriteFileWith(t, tbl, pairs, "s.parquet", "s", 0, sorted...),
			deltatest.WriteFileWith(t, tbl, pairs, "u.parquet", "u", 8, interleaved...),
			deltatest.WriteFileWith(t, tbl, bare, "n.parquet", "n", 16, sorted...))

		window := []spatial.Bound{{MinX: 2.5, MinY: 2.5, MaxX: 3.5, MaxY: 3.5}}
		m, err := maintain.Measure(t.Context(), opened(t, tbl), maintain.MeasureConfig{Windows: window, RowGroups: true})
		require.NoError(t, err)
		f := func(v float64) *float64 { return &v }
		require.Len(t, m.Partitions, 3)
		byPart := map[string]*maintain.RowGroupHealth{}
		for _, p := range m.Partitions {
			require.NotNil(t, p.Layout, "%+v %s", opts, p.Partition)
			byPart[p.Partition] = p.Layout.RowGroups
		}
		// Each sorted row group is a 1x1 box of the file's 7x7; the
		// interleaved ones are 7x7, 5x5, 3x3 and 1x1.
		assert.Equal(t, map[string]*maintain.RowGroupHealth{
			"part=s": {Count: 4, Area: f(1.0 / 49), MeanRead: f(1)},
			"part=u": {Count: 4, Area: f((49.0 + 25 + 9 + 1) / 4 / 49), MeanRead: f(4)},
			"part=n": {Count: 4, FilesWithoutBounds: 1, MeanRead: f(4)},
		}, byPart, "%+v", opts)
		require.NotNil(t, m.RowGroups)
		require.NotNil(t, m.RowGroups.Area)
		assert.InDelta(t, (4.0+84)/8/49, *m.RowGroups.Area, 1e-12, "the mean over the 8 bounded row groups")
		m.RowGroups.Area = nil
		assert.Equal(t, &maintain.RowGroupHealth{Count: 12, FilesWithoutBounds: 1, MeanRead: f(9)}, m.RowGroups, "%+v", opts)
	}
}

// TestMeasurePartitionsWithoutBBox: a partitioned table without bbox
// columns has its partitions' figures and no layout figures.
func TestMeasurePartitionsWithoutBBox(t *testing.T) {
	t.Parallel()
	tbl := deltatest.Create(t, t.TempDir(), deltatest.Options{Partitioned: true, NoBBox: true})
	deltatest.Append(t, tbl,
		deltatest.WriteFile(t, tbl, "a.parquet", "x", 0, deltatest.Point(t, 0, 0)),
		deltatest.WriteFile(t, tbl, "b.parquet", "x", 1, deltatest.Point(t, 0, 0)),
		deltatest.WriteFile(t, tbl, "c.parquet", "y", 2, deltatest.Point(t, 0, 0)))
	m, err := maintain.Measure(t.Context(), opened(t, tbl), maintain.MeasureConfig{})
	require.NoError(t, err)
	require.Len(t, m.Partitions, 2)
	assert.Equal(t, "part=x", m.Partitions[0].Partition)
	assert.Equal(t, int64(2), m.Partitions[0].FileCount)
	assert.Equal(t, "part=y", m.Partitions[1].Partition)
	assert.Nil(t, m.Partitions[0].Layout, "no bbox columns, no layout figures")
}

// fragmentedDelta is a spatial Delta table of six one-file appends that
// records a Hilbert layout, with a stray file left a month ago by a
// writer that never committed it.
func fragmentedDelta(t *testing.T) (*delta.Table, string) {
	t.Helper()
	dir := t.TempDir()
	tbl := deltatest.Fragmented(t, dir, 6, 30, deltatest.Options{Properties: map[string]string{layouts.Prop: "hilbert"}})
	stray := filepath.Join(dir, "stray.parquet")
	require.NoError(t, os.WriteFile(stray, []byte("never committed"), 0o644))
	old := time.Now().Add(-30 * 24 * time.Hour)
	require.NoError(t, os.Chtimes(stray, old, old))
	return tbl, dir
}

// statuses maps each step to its status (the last of a repeated step).
func statuses(rep *maintain.Report) map[string]string {
	out := map[string]string{}
	for _, s := range rep.Steps {
		out[s.Step] = s.Status
	}
	return out
}

// TestMaintain: a dry run says what it would optimize and vacuum and
// changes nothing; a run optimizes by the recorded layout, verifies,
// vacuums only what is past the table's retention, and keeps every row;
// a second run has nothing to do.
func TestMaintain(t *testing.T) {
	t.Parallel()
	tbl, dir := fragmentedDelta(t)
	rows := deltatest.LiveRows(t, tbl)
	v0 := deltatest.Snapshot(t, tbl).Version

	rep, err := maintain.Run(t.Context(), openedAt(t, dir), maintain.Config{DryRun: true})
	require.NoError(t, err)
	st := statuses(rep)
	assert.Equal(t, maintain.StepNotApplicable, st["lease"])
	assert.Equal(t, maintain.StepWouldRun, st["rewrite"])
	for _, s := range []string{"manifests", "expire", "orphans"} {
		assert.Equal(t, maintain.StepNotApplicable, st[s], s)
	}
	assert.Equal(t, maintain.StepWouldRun, st["vacuum"])
	require.NotNil(t, rep.Vacuum)
	assert.Equal(t, []delta.VacuumFile{{Path: "stray.parquet", Bytes: 15}}, rep.Vacuum.Files)
	assert.Equal(t, v0, deltatest.Snapshot(t, tbl).Version, "a dry run commits nothing")
	assert.FileExists(t, filepath.Join(dir, "stray.parquet"))

	rep, err = maintain.Run(t.Context(), openedAt(t, dir), maintain.Config{})
	require.NoError(t, err)
	st = statuses(rep)
	assert.Equal(t, maintain.StepDone, st["rewrite"])
	assert.Equal(t, maintain.StepDone, st["verify"])
	assert.Equal(t, maintain.StepDone, st["vacuum"])
	require.NotNil(t, rep.Rewrite)
	assert.Equal(t, layouts.FromProperty, rep.Rewrite.LayoutSource)
	assert.Equal(t, int64(6), rep.Before.FileCount)
	assert.Equal(t, int64(1), rep.After.FileCount)
	assert.Equal(t, rows, deltatest.LiveRows(t, tbl))
	assert.NoFileExists(t, filepath.Join(dir, "stray.parquet"))
	assert.FileExists(t, filepath.Join(dir, "f0.parquet"), "a file removed just now is within the retention")

	v1 := deltatest.Snapshot(t, tbl).Version
	rep, err = maintain.Run(t.Context(), openedAt(t, dir), maintain.Config{})
	require.NoError(t, err)
	st = statuses(rep)
	assert.Equal(t, maintain.StepNoop, st["gate"])
	assert.Equal(t, maintain.StepSkipped, st["rewrite"])
	assert.Equal(t, maintain.StepSkipped, st["vacuum"])
	assert.Contains(t, rep.Steps[len(rep.Steps)-2].Detail, "last vacuum")
	assert.Equal(t, v1, deltatest.Snapshot(t, tbl).Version, "nothing to do commits nothing")
	assert.Equal(t, rows, deltatest.LiveRows(t, tbl))
}

// TestMaintainRetention: a policy may not vacuum with less than the
// table's retention.
func TestMaintainRetention(t *testing.T) {
	t.Parallel()
	tbl, dir := fragmentedDelta(t)
	p, err := maintain.ParsePolicy([]byte("gate:\n  min-avg-file-bytes: -1\nvacuum:\n  retain: 2d\n  every: 0d\n"), "p.yaml")
	require.NoError(t, err)
	rep, err := maintain.Run(t.Context(), openedAt(t, dir), maintain.Config{Policy: p})
	require.ErrorIs(t, err, maintain.ErrPolicy)
	assert.Contains(t, err.Error(), "delta.deletedFileRetentionDuration of 7d")
	assert.Equal(t, maintain.StepFailed, statuses(rep)["vacuum"])
	assert.FileExists(t, filepath.Join(dir, "stray.parquet"))
	assert.Equal(t, int64(6), deltatest.Snapshot(t, tbl).Version)
}
