package spatial_test

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/spatial"
)

// point returns little-endian WKB of a point with type code code and
// ordinates vs.
func point(code uint32, vs ...float64) []byte {
	b := binary.LittleEndian.AppendUint32([]byte{1}, code)
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	return b
}

// TestGeoStatsTypesAndBound checks the types (Z for XYZ and XYZM, none for
// XYM) and the extent GeoStats gathers, and that invalid WKB is skipped.
func TestGeoStatsTypesAndBound(t *testing.T) {
	s := spatial.NewGeoStats()
	require.NoError(t, s.Add(point(1, 1, 2)))
	require.NoError(t, s.Add(point(1001, -3, 4, 9)))                         // ISO POINT Z
	require.NoError(t, s.Add(point(0x40000001, 5, -6, 7)))                   // EWKB POINT M
	require.NoError(t, s.Add(point(3001, 0, 0, 1, 1)))                       // ISO POINT ZM
	require.NoError(t, s.Add(binary.LittleEndian.AppendUint32(point(4), 0))) // MULTIPOINT EMPTY
	require.Error(t, s.Add([]byte{1, 1}))                                    // truncated
	assert.Equal(t, []string{"Point", "Point Z", "MultiPoint"}, s.Types())
	assert.Equal(t, []float64{-3, -6, 5, 4}, s.BBoxSlice())
	assert.EqualValues(t, 5, s.Rows())

	m := s.Metadata(spatial.Columns{Geometry: "geom", CRS: "EPSG:32633"})
	b, err := m.Marshal()
	require.NoError(t, err)
	assert.JSONEq(t, `{"version":"1.1.0","primary_column":"geom","columns":{"geom":{"encoding":"WKB","geometry_types":["Point","Point Z","MultiPoint"],`+
		`"crs":{"name":"EPSG:32633","id":{"authority":"EPSG","code":32633}},"bbox":[-3,-6,5,4]}}}`, string(b))
	back, err := spatial.ParseGeoMetadata(b)
	require.NoError(t, err)
	crs, err := back.Columns["geom"].CRSName()
	require.NoError(t, err)
	assert.Equal(t, "EPSG:32633", crs, "the PROJJSON written reads back as the same CRS")

	empty := spatial.NewGeoStats().Metadata(spatial.Columns{Geometry: "g", CRS: spatial.DefaultCRS})
	raw, err := json.Marshal(empty.Columns["g"])
	require.NoError(t, err)
	assert.JSONEq(t, `{"encoding":"WKB","geometry_types":[]}`, string(raw), "CRS84 omitted, no bbox without rows")
}
