package bench

import (
	"encoding/binary"
	"math"
)

// ISO WKB type codes for the geometries the generator writes.
const (
	wkbPoint      = 1
	wkbLineString = 2
	wkbPolygon    = 3
)

// appendWKBHeader appends a little-endian WKB header for type typ.
func appendWKBHeader(b []byte, typ uint32) []byte {
	b = append(b, 1)
	return binary.LittleEndian.AppendUint32(b, typ)
}

func appendCoord(b []byte, x, y float64) []byte {
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(y))
}

// appendPointWKB appends POINT(x y).
func appendPointWKB(b []byte, x, y float64) []byte {
	return appendCoord(appendWKBHeader(b, wkbPoint), x, y)
}

// appendLineWKB appends LINESTRING(xy[0] xy[1], ...); xy holds x,y pairs.
func appendLineWKB(b []byte, xy []float64) []byte {
	b = appendWKBHeader(b, wkbLineString)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(xy)/2))
	for i := 0; i < len(xy); i += 2 {
		b = appendCoord(b, xy[i], xy[i+1])
	}
	return b
}

// appendPolygonWKB appends a one-ring POLYGON; ring holds x,y pairs and
// must already be closed.
func appendPolygonWKB(b []byte, ring []float64) []byte {
	b = appendWKBHeader(b, wkbPolygon)
	b = binary.LittleEndian.AppendUint32(b, 1)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(ring)/2))
	for i := 0; i < len(ring); i += 2 {
		b = appendCoord(b, ring[i], ring[i+1])
	}
	return b
}
