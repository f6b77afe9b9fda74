package validate_test

import (
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/validate"
	"github.com/geocompact/geocompact/validate/validatetest"
)

// A file scan planning splits into ranges of row groups (larger than
// read.split.target-size, several row groups) is validated once, whole.
func TestTableValidatesSplitFilesOnce(t *testing.T) {
	props := iceberg.Properties{spatial.PropGeometryColumn: "geometry", spatial.PropGeometryEncoding: spatial.EncodingWKB,
		"write.parquet.row-group-limit": "20", "read.split.target-size": "512"}
	tbl := newTable(t, props, validatetest.Points(200), validatetest.Points(40))
	tasks, err := tbl.Scan().PlanFiles(t.Context())
	require.NoError(t, err)
	require.Greater(t, len(tasks), 2, "the files must be planned as several tasks each")

	rep, err := checkIceberg(t, tbl, validate.DefaultConfig())
	require.NoError(t, err)
	require.EqualValues(t, 240, rep.Total.Rows, "rows validated")
	require.Equal(t, 2, len(rep.Files), "files validated")
	require.True(t, rep.OK())
}
