package deltatable

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/delta/deltatest"
	"github.com/geocompact/geocompact/table"
)

// TestReadInOrderAndStops checks the read-ahead read: every file's rows
// come in file order, a projection reads only its columns, and a consumer
// that stops early (several times, at different points) ends the read
// without blocking.
func TestReadInOrderAndStops(t *testing.T) {
	dir := t.TempDir()
	tbl := deltatest.Fragmented(t, dir, 9, 50, deltatest.Options{})
	ft, err := Open(t.Context(), tbl, dir, table.ForRead)
	require.NoError(t, err)
	files := ft.Files
	require.Len(t, files, 9)

	sc, rows, err := ft.Format.Read(t.Context(), files, files, nil)
	require.NoError(t, err)
	var ids []int64
	for rec, err := range rows {
		require.NoError(t, err)
		ids = append(ids, rec.Column(sc.FieldIndices("id")[0]).(*array.Int64).Int64Values()...)
		rec.Release()
	}
	require.Len(t, ids, 450)
	for i, id := range ids { // file fK holds ids [50K, 50K+50); the files are in path order
		require.Equal(t, int64(i), id, "rows come file by file, in order")
	}

	psc, prows, err := ft.Format.Read(t.Context(), files, files, []string{"bbox_minx", "id"})
	require.NoError(t, err)
	assert.Equal(t, []string{"bbox_minx", "id"}, fieldNames(psc))
	var n int64
	for rec, err := range prows {
		require.NoError(t, err)
		n += rec.NumRows()
		rec.Release()
	}
	assert.Equal(t, int64(450), n)

	for stop := range 5 {
		_, rows, err := ft.Format.Read(t.Context(), files, files, nil)
		require.NoError(t, err)
		seen := 0
		for rec, err := range rows {
			require.NoError(t, err)
			rec.Release()
			if seen++; seen > stop {
				break
			}
		}
		assert.Equal(t, stop+1, seen)
	}
}

func fieldNames(sc *arrow.Schema) []string {
	var out []string
	for _, f := range sc.Fields() {
		out = append(out, f.Name)
	}
	return out
}

var _ table.Format = (*format)(nil)
