package deltatable_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/delta/deltatest"
	"github.com/geocompact/geocompact/inspect"
	"github.com/geocompact/geocompact/internal/testing/testenv"
	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/deltatable"
)

// described is tbl's latest version as inspect reads it.
func described(t *testing.T, tbl *delta.Table, name string) table.Table {
	t.Helper()
	d, err := deltatable.Open(t.Context(), tbl, name, table.ForRead)
	require.NoError(t, err)
	return d
}

func TestInspectFiles(t *testing.T) {
	tbl := deltatest.Create(t, t.TempDir(), deltatest.Options{Partitioned: true, Covering: true, ColumnMapping: "name"})
	a := deltatest.WriteFile(t, tbl, "a.parquet", "x", 0, deltatest.Point(t, 1, 2), deltatest.Point(t, 3, -1))
	b := deltatest.WriteFile(t, tbl, "b.parquet", "y", 2, deltatest.Point(t, 0, 0))
	b.Stats = ""
	b.Path = "part=y%20z/b%3A1.parquet" // the log's encoding of the name on disk
	deltatest.Append(t, tbl, a, b)
	deltatest.DeleteRows(t, tbl, a, 1)

	rows, err := inspect.Rows(t.Context(), described(t, tbl, "lake"), inspect.Files)
	require.NoError(t, err)
	require.Len(t, rows, 2)
	get := func(r inspect.Row, k string) any { v, ok := r.Get(k); require.True(t, ok, k); return v }
	assert.Equal(t, "part=x/a.parquet", get(rows[0], "file_path"))
	assert.Equal(t, inspect.Row{{Key: "part", Value: "x"}}, get(rows[0], "partition"), "logical name, though stored physically")
	assert.Equal(t, int64(2), get(rows[0], "record_count"))
	assert.Equal(t, a.Size, get(rows[0], "file_size_in_bytes"))
	assert.Equal(t, spatial.Bound{MinX: 1, MinY: -1, MaxX: 3, MaxY: 2}, get(rows[0], "bbox"))
	assert.Equal(t, int64(1), get(rows[0], "deletion_vector_cardinality"))
	assert.Equal(t, "part=y z/b:1.parquet", get(rows[1], "file_path"), "the name on disk, not the log's encoding")
	assert.Nil(t, get(rows[1], "record_count"), "no stats")
	assert.Nil(t, get(rows[1], "bbox"))
	assert.Equal(t, int64(0), get(rows[1], "deletion_vector_cardinality"))

	_, err = inspect.Rows(t.Context(), described(t, tbl, "lake"), inspect.Manifests)
	require.ErrorIs(t, err, inspect.ErrKind)
}

func TestInspectFilesGoldenRecordsMinusDeletes(t *testing.T) {
	// The files' records less their deletion vectors' rows are the rows a
	// read returns.
	tbl, err := delta.OpenLocal(filepath.Join(testenv.DeltaGolden(t), "dv-partitioned-with-checkpoint"))
	require.NoError(t, err)
	rows, err := inspect.Rows(t.Context(), described(t, tbl, "lake"), inspect.Files)
	require.NoError(t, err)
	var live, deleted int64
	for _, r := range rows {
		n, _ := r.Get("record_count")
		d, _ := r.Get("deletion_vector_cardinality")
		live += n.(int64) - d.(int64)
		deleted += d.(int64)
	}
	assert.Positive(t, deleted)
	assert.Equal(t, deltatest.LiveRows(t, tbl), live)
}

func TestInspectHistory(t *testing.T) {
	tbl := deltatest.Create(t, t.TempDir(), deltatest.Options{})
	deltatest.Append(t, tbl, deltatest.WriteFile(t, tbl, "a.parquet", "", 0, deltatest.Point(t, 1, 2)))
	rows, err := inspect.Rows(t.Context(), described(t, tbl, "lake"), inspect.History)
	require.NoError(t, err)
	require.Len(t, rows, 2)
	v0, _ := rows[0].Get("version")
	op1, _ := rows[1].Get("operation")
	params, _ := rows[1].Get("operation_parameters")
	rv, _ := rows[1].Get("read_version")
	assert.Equal(t, int64(0), v0)
	assert.Equal(t, "WRITE", op1)
	assert.Equal(t, map[string]any{"mode": "Append"}, params)
	assert.Equal(t, int64(0), rv)
}

func TestInspectSchema(t *testing.T) {
	tbl := deltatest.Create(t, t.TempDir(), deltatest.Options{Partitioned: true, Covering: true, ColumnMapping: "name"})
	got, err := inspect.Schema(described(t, tbl, "lake/pings"))
	require.NoError(t, err)
	assert.Equal(t, "delta (reader v3, writer v7)", got.Format)
	assert.Equal(t, "part", got.PartitionSpec)
	require.NotNil(t, got.Geometry, got.GeometryProblem)
	assert.Equal(t, "geometry", got.Geometry.Column)
	assert.Equal(t, []string{"bbox.xmin", "bbox.ymin", "bbox.xmax", "bbox.ymax"}, got.Geometry.BBoxColumns)
	require.Len(t, got.Columns, 4)
	assert.Equal(t, inspect.Column{ID: 3, Name: "bbox", Type: "struct<xmin:double,ymin:double,xmax:double,ymax:double>"}, got.Columns[2])
	assert.Equal(t, "name", got.Properties["delta.columnMapping.mode"])
}
