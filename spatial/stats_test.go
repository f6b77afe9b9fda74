package spatial_test

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/spatial/icebergspatial"
)

func le64(f float64) []byte { return binary.LittleEndian.AppendUint64(nil, math.Float64bits(f)) }

// geoPoint encodes a geometry bound: little-endian float64 coordinates.
func geoPoint(coords ...float64) []byte {
	var b []byte
	for _, c := range coords {
		b = append(b, le64(c)...)
	}
	return b
}

// statsSchema is a table schema with a geometry column of type geom and,
// with bbox, the four bbox columns; the field ids are not in column order,
// so a rule keyed by hard-coded ids would fail.
func statsSchema(geom iceberg.Type, bbox bool) *iceberg.Schema {
	fields := []iceberg.NestedField{{ID: 11, Name: "id", Type: iceberg.PrimitiveTypes.Int64}, {ID: 3, Name: "geometry", Type: geom}}
	if bbox {
		for i, n := range spatial.BBoxColumns {
			fields = append(fields, iceberg.NestedField{ID: 20 - i, Name: n, Type: iceberg.PrimitiveTypes.Float64})
		}
	}
	return iceberg.NewSchema(0, fields...)
}

func TestFileBound(t *testing.T) {
	v2 := statsSchema(iceberg.PrimitiveTypes.Binary, true)
	v3 := statsSchema(iceberg.GeometryType{}, false)
	v3bbox := statsSchema(iceberg.GeometryType{}, true)
	id := func(sc *iceberg.Schema, name string) int {
		f, ok := sc.FindFieldByName(name)
		require.True(t, ok, name)
		return f.ID
	}
	bboxBounds := func(sc *iceberg.Schema, lx, ly, ux, uy float64) (map[int][]byte, map[int][]byte) {
		lower := map[int][]byte{
			id(sc, "bbox_minx"): le64(lx), id(sc, "bbox_miny"): le64(ly),
			// the max columns' lower bounds and the min columns' upper
			// bounds do not count
			id(sc, "bbox_maxx"): le64(-1000), id(sc, "bbox_maxy"): le64(-1000),
		}
		upper := map[int][]byte{
			id(sc, "bbox_minx"): le64(1000), id(sc, "bbox_miny"): le64(1000),
			id(sc, "bbox_maxx"): le64(ux), id(sc, "bbox_maxy"): le64(uy),
		}
		return lower, upper
	}
	l2, u2 := bboxBounds(v2, -10, -5, 20, 15)
	l3b, u3b := bboxBounds(v3bbox, 1, 2, 3, 4)
	l3b[id(v3bbox, "geometry")], u3b[id(v3bbox, "geometry")] = geoPoint(-50, -50), geoPoint(50, 50)
	geom := id(v3, "geometry")
	tests := []struct {
		name         string
		sc           *iceberg.Schema
		lower, upper map[int][]byte
		want         spatial.Bound
		ok           bool
	}{
		{"bbox columns", v2, l2, u2, spatial.Bound{MinX: -10, MinY: -5, MaxX: 20, MaxY: 15}, true},
		{"bbox column bound missing", v2, map[int][]byte{id(v2, "bbox_minx"): le64(0)}, u2, spatial.Bound{}, false},
		{"bbox inverted", v2, u2, l2, spatial.Bound{}, false},
		{"geometry", v3, map[int][]byte{geom: geoPoint(300, 100)}, map[int][]byte{geom: geoPoint(309.5, 109.5, 7)}, spatial.Bound{MinX: 300, MinY: 100, MaxX: 309.5, MaxY: 109.5}, true},
		{"bbox columns win over geometry", v3bbox, l3b, u3b, spatial.Bound{MinX: 1, MinY: 2, MaxX: 3, MaxY: 4}, true},
		{"geometry missing", v3, nil, nil, spatial.Bound{}, false},
		{"geometry NaN", v3, map[int][]byte{geom: geoPoint(math.NaN(), 0)}, map[int][]byte{geom: geoPoint(1, 1)}, spatial.Bound{}, false},
		{"geometry malformed", v3, map[int][]byte{geom: {1, 2, 3}}, map[int][]byte{geom: geoPoint(1, 1)}, spatial.Bound{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cols, err := icebergspatial.Columns(tc.sc, map[string]string{spatial.PropGeometryColumn: "geometry"}, "")
			require.NoError(t, err)
			got, ok := icebergspatial.FileBound(tc.sc, cols, tc.lower, tc.upper)
			assert.Equal(t, tc.ok, ok)
			if tc.ok {
				assert.Equal(t, tc.want, got)
			}
		})
	}
}
