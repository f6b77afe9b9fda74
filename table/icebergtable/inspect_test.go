package icebergtable_test

import (
	"encoding/binary"
	"math"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/google/go-cmp/cmp"

	"github.com/geocompact/geocompact/table/icebergtable"
)

func boundLE64(f float64) []byte { return binary.LittleEndian.AppendUint64(nil, math.Float64bits(f)) }

func boundLE32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }

// point encodes a geometry bound: little-endian float64 coordinates.
func geoBoundPoint(coords ...float64) []byte {
	var b []byte
	for _, c := range coords {
		b = append(b, boundLE64(c)...)
	}
	return b
}

func TestDecodeBound(t *testing.T) {
	tests := []struct {
		name string
		typ  iceberg.Type
		in   []byte
		want any
	}{
		{"double", iceberg.PrimitiveTypes.Float64, boundLE64(-179.5), -179.5},
		{"int", iceberg.PrimitiveTypes.Int32, boundLE32(uint32(0xFFFFFFFE)), int32(-2)},
		{"long", iceberg.PrimitiveTypes.Int64, binary.LittleEndian.AppendUint64(nil, 42), int64(42)},
		{"date", iceberg.PrimitiveTypes.Date, boundLE32(20454), "2026-01-01"},
		{"timestamptz", iceberg.PrimitiveTypes.TimestampTz, binary.LittleEndian.AppendUint64(nil, uint64(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixMicro())), time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)},
		{"string", iceberg.PrimitiveTypes.String, []byte("abc"), "abc"},
		{"geometry xy", iceberg.GeometryType{}, geoBoundPoint(1.5, -2), map[string]any{"x": 1.5, "y": -2.0}},
		{"geometry xyzm", iceberg.GeometryType{}, geoBoundPoint(1, 2, 3, 4), map[string]any{"x": 1.0, "y": 2.0, "z": 3.0, "m": 4.0}},
		{"geometry bad length", iceberg.GeometryType{}, []byte{1, 2, 3}, "010203"},
		{"double truncated", iceberg.PrimitiveTypes.Float64, []byte{1, 2}, "0102"},
		{"binary", iceberg.PrimitiveTypes.Binary, []byte{0xde, 0xad}, "dead"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := icebergtable.DecodeBound(tc.typ, tc.in)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("DecodeBound (-want +got):\n%s", diff)
			}
		})
	}
}
