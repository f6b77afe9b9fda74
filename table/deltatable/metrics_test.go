package deltatable

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/assert"

	"github.com/geocompact/geocompact/delta"
)

// TestStatLiteral reads Delta statistics as bounds: numbers in their
// column's type, decimals at their scale, dates, timestamps with their
// offset (a maximum widened to the end of its millisecond), and no bound
// from a string maximum that may be truncated or a number that is NaN.
func TestStatLiteral(t *testing.T) {
	prim := func(name string) delta.DataType { return &delta.PrimitiveType{Name: name} }
	ts := func(s string) iceberg.Literal {
		tm, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			panic(err)
		}
		return iceberg.NewLiteral(iceberg.Timestamp(tm.UnixMicro()))
	}
	for _, c := range []struct {
		name  string
		v     any
		dt    delta.DataType
		typ   iceberg.Type
		isMax bool
		want  iceberg.Literal
	}{
		{"integer", json.Number("4"), prim("integer"), iceberg.PrimitiveTypes.Int32, false, iceberg.NewLiteral(int32(4))},
		{"long", json.Number("-9000000000"), prim("long"), iceberg.PrimitiveTypes.Int64, false, iceberg.NewLiteral(int64(-9000000000))},
		{"double", json.Number("4.5"), prim("double"), iceberg.PrimitiveTypes.Float64, true, iceberg.NewLiteral(4.5)},
		{"float", json.Number("1e3"), prim("float"), iceberg.PrimitiveTypes.Float32, false, iceberg.NewLiteral(float32(1000))},
		{"NaN", "NaN", prim("double"), iceberg.PrimitiveTypes.Float64, true, nil},
		{"decimal", json.Number("12"), &delta.DecimalType{Precision: 5, Scale: 2}, iceberg.DecimalTypeOf(5, 2),
			false, must(iceberg.StringLiteral("12.00").To(iceberg.DecimalTypeOf(5, 2)))},
		{"date", "2026-01-02", prim("date"), iceberg.PrimitiveTypes.Date, false, iceberg.NewLiteral(iceberg.Date(20455))},
		{"timestamp offset", "2000-01-01T00:00:00.000-08:00", prim("timestamp"), iceberg.PrimitiveTypes.TimestampTz,
			false, ts("2000-01-01T08:00:00Z")},
		{"timestamp max", "2026-01-01T05:30:00.000Z", prim("timestamp"), iceberg.PrimitiveTypes.TimestampTz,
			true, ts("2026-01-01T05:30:00.000999Z")},
		{"timestamp_ntz", "2026-01-01T05:30:00.250", prim("timestamp_ntz"), iceberg.PrimitiveTypes.Timestamp,
			false, ts("2026-01-01T05:30:00.250Z")},
		{"short string max", "bravo", prim("string"), iceberg.PrimitiveTypes.String, true, iceberg.NewLiteral("bravo")},
		{"truncated string max", strings.Repeat("z", 32), prim("string"), iceberg.PrimitiveTypes.String, true, nil},
		{"truncated string min", strings.Repeat("z", 32), prim("string"), iceberg.PrimitiveTypes.String, false,
			iceberg.NewLiteral(strings.Repeat("z", 32))},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, statLiteral(c.v, c.dt, c.typ, c.isMax))
		})
	}
}

func must(l iceberg.Literal, err error) iceberg.Literal {
	if err != nil {
		panic(err)
	}
	return l
}
