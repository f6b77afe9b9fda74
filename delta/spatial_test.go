package delta_test

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/delta/deltatest"
	"github.com/geocompact/geocompact/spatial"
)

func TestSpatialColumns(t *testing.T) {
	for _, tc := range []struct {
		name     string
		opts     deltatest.Options
		bbox     [4]string
		covering string
	}{
		{"flat", deltatest.Options{}, spatial.BBoxColumns, ""},
		{"covering", deltatest.Options{Covering: true, ColumnMapping: "name"}, [4]string{}, "bbox"},
		{"none", deltatest.Options{NoBBox: true}, [4]string{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tbl := deltatest.Create(t, t.TempDir(), tc.opts)
			cols, err := deltatest.Snapshot(t, tbl).SpatialColumns("")
			require.NoError(t, err)
			assert.Equal(t, "geometry", cols.Geometry)
			assert.Equal(t, spatial.EncodingWKB, cols.Encoding)
			assert.Equal(t, spatial.DefaultCRS, cols.CRS)
			assert.Equal(t, "default", cols.CRSSource)
			assert.Equal(t, tc.bbox, cols.BBox)
			assert.Equal(t, tc.covering, cols.Covering)
		})
	}
}

func TestSpatialColumnsProperties(t *testing.T) {
	tbl := deltatest.Create(t, t.TempDir(), deltatest.Options{Properties: map[string]string{
		spatial.PropCRS: "EPSG:3857", spatial.PropGeometryColumn: "id"}})
	s := deltatest.Snapshot(t, tbl)
	cols, err := s.SpatialColumns("")
	var ce *spatial.ColumnError
	require.ErrorAs(t, err, &ce, "the property names a long column")
	assert.Equal(t, "id", ce.Column)
	assert.Equal(t, spatial.BBoxColumns, cols.BBox, "bbox columns are found even so")

	cols, err = s.SpatialColumns("geometry")
	require.NoError(t, err)
	assert.Equal(t, "EPSG:3857", cols.CRS)
	assert.Equal(t, "table property", cols.CRSSource)
}

func TestFileBound(t *testing.T) {
	for _, opts := range []deltatest.Options{{}, {Covering: true, ColumnMapping: "name"}} {
		tbl := deltatest.Create(t, t.TempDir(), opts)
		a := deltatest.WriteFile(t, tbl, "a.parquet", "", 0, deltatest.Point(t, 1, 2), deltatest.Point(t, 5, -3))
		noStats := deltatest.WriteFile(t, tbl, "b.parquet", "", 2, deltatest.Point(t, 0, 0))
		noStats.Stats = ""
		deltatest.Append(t, tbl, a, noStats)
		s := deltatest.Snapshot(t, tbl)
		cols, err := s.SpatialColumns("")
		require.NoError(t, err)
		require.Len(t, s.Files, 2)
		b, ok := s.FileBound(s.Files[0], cols)
		require.True(t, ok, "%+v", opts)
		assert.Equal(t, spatial.Bound{MinX: 1, MinY: -3, MaxX: 5, MaxY: 2}, b)
		_, ok = s.FileBound(s.Files[1], cols)
		assert.False(t, ok, "a file without stats has no bound")
	}
}

func TestFileBoundRejects(t *testing.T) {
	tbl := deltatest.Create(t, t.TempDir(), deltatest.Options{})
	deltatest.Append(t, tbl, deltatest.WriteFile(t, tbl, "a.parquet", "", 0, deltatest.Point(t, 1, 2)))
	s := deltatest.Snapshot(t, tbl)
	cols, err := s.SpatialColumns("")
	require.NoError(t, err)
	for _, stats := range []string{
		`{"numRecords":1,"minValues":{"bbox_minx":3,"bbox_miny":0},"maxValues":{"bbox_maxx":1,"bbox_maxy":1}}`,
		`{"numRecords":1,"minValues":{"bbox_minx":"NaN","bbox_miny":0},"maxValues":{"bbox_maxx":1,"bbox_maxy":1}}`,
		`{"numRecords":1,"minValues":{"bbox_miny":0},"maxValues":{"bbox_maxx":1,"bbox_maxy":1}}`,
		`{not json`,
	} {
		add := *s.Files[0]
		add.Stats = stats
		_, ok := s.FileBound(&add, cols)
		assert.False(t, ok, stats)
	}
	none := spatial.Columns{Geometry: "geometry"}
	_, ok := s.FileBound(s.Files[0], none)
	assert.False(t, ok, "no bbox columns, no bound")
}

func TestHistory(t *testing.T) {
	tbl := deltatest.Create(t, t.TempDir(), deltatest.Options{})
	deltatest.Append(t, tbl, deltatest.WriteFile(t, tbl, "a.parquet", "", 0, deltatest.Point(t, 1, 2)))
	deltatest.Append(t, tbl, deltatest.WriteFile(t, tbl, "b.parquet", "", 1, deltatest.Point(t, 3, 4)))
	h, err := tbl.History(t.Context())
	require.NoError(t, err)
	require.Len(t, h, 3)
	for i, c := range h {
		assert.Equal(t, int64(i), c.Version)
		require.NotNil(t, c.Info)
		assert.False(t, c.Timestamp.IsZero())
	}
	assert.Equal(t, "CREATE TABLE", h[0].Info.Operation)
	assert.Equal(t, "WRITE", h[2].Info.Operation)
	assert.Equal(t, map[string]any{"mode": "Append"}, h[2].Info.OperationParameters)
	assert.Equal(t, map[string]any{"numFiles": "1"}, h[2].Info.OperationMetrics)

	empty, err := delta.OpenLocal(t.TempDir())
	require.NoError(t, err)
	_, err = empty.History(t.Context())
	require.ErrorIs(t, err, delta.ErrNotATable)
}

func TestReadColumns(t *testing.T) {
	tbl := deltatest.Create(t, t.TempDir(), deltatest.Options{Partitioned: true})
	deltatest.Append(t, tbl, deltatest.WriteFile(t, tbl, "a.parquet", "p", 0, deltatest.Point(t, 1, 2), deltatest.Point(t, 3, 4)))
	s := deltatest.Snapshot(t, tbl)
	var rows int64
	err := tbl.Read(t.Context(), s, delta.ReadOptions{Columns: []string{"geometry"}}, func(_ *delta.Add, rec arrow.RecordBatch) error {
		rows += rec.NumRows()
		assert.Equal(t, 7, int(rec.NumCols()), "the schema is kept")
		assert.Equal(t, 0, rec.Column(1).NullN(), "geometry is read")
		assert.Equal(t, rec.NumRows(), int64(rec.Column(0).NullN()), "id is not")
		assert.Equal(t, "p", rec.Column(6).(*array.String).Value(0), "partition values are filled in")
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, int64(2), rows)
}

func TestPartitionPath(t *testing.T) {
	tbl := deltatest.Create(t, t.TempDir(), deltatest.Options{Partitioned: true, ColumnMapping: "name"})
	a := deltatest.WriteFile(t, tbl, "a.parquet", "x y/z", 0, deltatest.Point(t, 1, 2))
	b := deltatest.WriteFile(t, tbl, "b.parquet", "", 1, deltatest.Point(t, 1, 2))
	for k := range b.PartitionValues {
		b.PartitionValues[k] = nil
	}
	deltatest.Append(t, tbl, a, b)
	s := deltatest.Snapshot(t, tbl)
	require.Len(t, s.Files, 2)
	assert.Contains(t, s.Files[1].PartitionValues, "col-20", "stored under the physical name")
	assert.Equal(t, "part=x%20y%2Fz", s.PartitionPath(s.Files[1]))
	assert.Equal(t, "part="+delta.NullPartition, s.PartitionPath(s.Files[0]), "files are in path order: part=/b.parquet first")

	flat := deltatest.Create(t, t.TempDir(), deltatest.Options{})
	deltatest.Append(t, flat, deltatest.WriteFile(t, flat, "a.parquet", "", 0, deltatest.Point(t, 1, 2)))
	fs := deltatest.Snapshot(t, flat)
	assert.Empty(t, fs.PartitionPath(fs.Files[0]))
}
