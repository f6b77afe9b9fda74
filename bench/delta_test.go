package bench

import (
	"errors"
	"path"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/delta/deltatest"
	"github.com/geocompact/geocompact/internal/remedy"
	format "github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/deltatable"
)

// deltaArrivals creates a Delta table at a temporary directory whose files
// sort by path unlike their arrival: z1 and a1 in version 1, m2 in
// version 2, each of n points on its own stretch of the diagonal.
func deltaArrivals(t *testing.T, o deltatest.Options, n int) (*delta.Table, string) {
	t.Helper()
	dir := t.TempDir()
	tbl := deltatest.Create(t, dir, o)
	rows := func(from int) []deltatest.Row {
		out := make([]deltatest.Row, n)
		for i := range out {
			out[i] = deltatest.Point(t, float64(from+i), float64(from+i))
		}
		return out
	}
	z1 := deltatest.WriteFile(t, tbl, "z1.parquet", "p", 0, rows(0)...)
	a1 := deltatest.WriteFile(t, tbl, "a1.parquet", "p", int64(n), rows(n)...)
	deltatest.Append(t, tbl, z1, a1)
	deltatest.Append(t, tbl, deltatest.WriteFile(t, tbl, "m2.parquet", "p", int64(2*n), rows(2*n)...))
	return tbl, dir
}

// openDelta describes the Delta table tbl at dir at its latest version.
func openDelta(t *testing.T, tbl *delta.Table, dir string) format.Table {
	t.Helper()
	dt, err := deltatable.Open(t.Context(), tbl, dir, format.ForRead)
	require.NoError(t, err)
	return dt
}

func arrivalNames(t *testing.T, tbl *delta.Table, dir string) ([]string, ArrivalSource, int64) {
	t.Helper()
	dt := openDelta(t, tbl, dir)
	src, err := statsSource(t.Context(), dt)
	require.NoError(t, err)
	var live int64
	for _, f := range src.files {
		live += int64(len(f.rows))
	}
	files, history, err := dt.Format.(statsFormat).Arrival(t.Context(), live)
	require.NoError(t, err)
	order := ArrivalFiles
	if history {
		order = ArrivalHistory
	}
	var names []string
	for _, f := range files {
		names = append(names, path.Base(f.Path))
	}
	sc, recs, err := formatRows(dt, files)(t.Context())
	require.NoError(t, err)
	require.NotNil(t, sc)
	var rows int64
	for rec, err := range recs {
		require.NoError(t, err)
		rows += rec.NumRows()
		rec.Release()
	}
	return names, order, rows
}

func TestDeltaArrival(t *testing.T) {
	t.Parallel()
	tbl, dir := deltaArrivals(t, deltatest.Options{ColumnMapping: "name"}, 10)
	names, order, rows := arrivalNames(t, tbl, dir)
	assert.Equal(t, ArrivalHistory, order)
	assert.Equal(t, []string{"z1.parquet", "a1.parquet", "m2.parquet"}, names, "by version, then position in the commit")
	assert.Equal(t, int64(30), rows)

	// A delete leaves a deletion vector: the history no longer stands for
	// the rows, and the current files are read in the order their adds
	// were committed (a1's again by the delete), deletes applied.
	snap := deltatest.Snapshot(t, tbl)
	for _, a := range snap.Files {
		if path.Base(a.Path) == "a1.parquet" {
			deltatest.DeleteRows(t, tbl, a, 0, 3)
		}
	}
	names, order, rows = arrivalNames(t, tbl, dir)
	assert.Equal(t, ArrivalFiles, order)
	assert.Equal(t, []string{"z1.parquet", "m2.parquet", "a1.parquet"}, names)
	assert.Equal(t, int64(28), rows)
}

func TestMeasureDeltaDeletionVectors(t *testing.T) {
	t.Parallel()
	tbl, dir := deltaArrivals(t, deltatest.Options{ColumnMapping: "name"}, 50)
	snap := deltatest.Snapshot(t, tbl)
	deltatest.DeleteRows(t, tbl, snap.Files[0], 1, 2, 3, 4)
	version := deltatest.Snapshot(t, tbl).Version

	rep, err := Measure(t.Context(), openDelta(t, tbl, dir), Config{Layouts: []Layout{Current, Unsorted, "hilbert"},
		WindowConfig: WindowConfig{Count: 10, Seed: 1}, Options: map[string]string{"target-file-size-bytes": "2000"}})
	require.NoError(t, err)
	assert.Equal(t, int64(146), rep.Rows)
	assert.Equal(t, ArrivalFiles, rep.ArrivalOrder)
	require.Len(t, rep.Layouts, 3)
	for _, l := range rep.Layouts {
		assert.Equal(t, int64(146), l.Rows, "%s holds the live rows", l.Layout)
	}
	assert.Equal(t, 3, rep.Layouts[0].Files, "current: the table's own files")
	assert.Greater(t, rep.Layouts[2].Files, 1, "hilbert: cut at the target size")
	assert.Equal(t, version, deltatest.Snapshot(t, tbl).Version, "no commit")
}

func TestMeasureDeltaRefusals(t *testing.T) {
	t.Parallel()
	for name, o := range map[string]deltatest.Options{"no bbox": {NoBBox: true}, "covering": {Covering: true}} {
		t.Run(name, func(t *testing.T) {
			tbl, dir := deltaArrivals(t, o, 3)
			_, err := Measure(t.Context(), openDelta(t, tbl, dir), Config{})
			require.ErrorIs(t, err, ErrDeltaBBoxColumns)
			assert.Contains(t, err.Error(), "bbox_minx")
			assert.Contains(t, err.Error(), "has none: write them with the rows (an ingest adds them) or measure the table's metrics instead")
			c, ok := errors.AsType[remedy.Carrier](err)
			require.True(t, ok, "the error carries its remedy")
			assert.Equal(t, RemedyBBoxColumns, c.Remedy().Kind)
		})
	}
	tbl, dir := deltaArrivals(t, deltatest.Options{}, 3)
	_, err := Measure(t.Context(), openDelta(t, tbl, dir), Config{Keep: true})
	require.ErrorIs(t, err, ErrDeltaKeep)
}
