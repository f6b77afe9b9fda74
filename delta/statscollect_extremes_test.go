package delta

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExtremesMatchRowByRow checks the typed pass over a batch against
// the comparison of every row's boxed value, over batches with nulls,
// NaNs, signed zeros, equal values and none at all, for every type it
// takes: the min and max (and which of equal values is kept) are the same.
func TestExtremesMatchRowByRow(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	mem := memory.DefaultAllocator
	types := []arrow.DataType{
		arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64,
		arrow.PrimitiveTypes.Date32, arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64,
		arrow.BinaryTypes.String, arrow.BinaryTypes.LargeString,
		&arrow.TimestampType{Unit: arrow.Nanosecond}, &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"},
		&arrow.TimestampType{Unit: arrow.Second},
	}
	for _, dt := range types {
		for _, n := range []int{0, 1, 7, 500} {
			for _, nullShare := range []float64{0, 0.3, 1} {
				t.Run(fmt.Sprintf("%s/%d rows/%.0f%% nulls", dt, n, 100*nullShare), func(t *testing.T) {
					b := array.NewBuilder(mem, dt)
					defer b.Release()
					for range n {
						if rng.Float64() < nullShare {
							b.AppendNull()
							continue
						}
						appendRandom(t, b, rng)
					}
					arr := b.NewArray()
					defer arr.Release()

					var want leafStats
					for r := range arr.Len() {
						if arr.IsNull(r) {
							continue
						}
						if v, ok := statValue(arr, r); ok {
							want.update(v)
						}
					}
					var got leafStats
					lo, hi, typed := extremes(arr)
					require.True(t, typed, "a type with a typed pass")
					if lo != nil {
						got.update(lo)
						got.update(hi)
					}
					assert.Equal(t, fmt.Sprintf("%#v", want.min), fmt.Sprintf("%#v", got.min), "min")
					assert.Equal(t, fmt.Sprintf("%#v", want.max), fmt.Sprintf("%#v", got.max), "max")
					if f, ok := want.min.(float64); ok {
						assert.Equal(t, math.Signbit(f), math.Signbit(got.min.(float64)), "the same zero kept as min")
						assert.Equal(t, math.Signbit(want.max.(float64)), math.Signbit(got.max.(float64)), "the same zero kept as max")
					}
				})
			}
		}
	}
}

// appendRandom appends a value drawn from a small set, so that equal
// values, signed zeros and NaNs recur.
func appendRandom(t *testing.T, b array.Builder, rng *rand.Rand) {
	i := rng.IntN(9) - 4
	switch b := b.(type) {
	case *array.Int8Builder:
		b.Append(int8(i * 30))
	case *array.Int16Builder:
		b.Append(int16(i * 1000))
	case *array.Int32Builder:
		b.Append(int32(i * 100000))
	case *array.Int64Builder:
		b.Append(int64(i) << 40)
	case *array.Date32Builder:
		b.Append(arrow.Date32(i * 365))
	case *array.Float32Builder:
		b.Append([]float32{float32(math.NaN()), float32(math.Copysign(0, -1)), 0, 1.5, -2.5, float32(math.Inf(1)), float32(math.Inf(-1)), 3, -1}[i+4])
	case *array.Float64Builder:
		b.Append([]float64{math.NaN(), math.Copysign(0, -1), 0, 1.5, -2.5, math.Inf(1), math.Inf(-1), 3, math.NaN()}[i+4])
	case *array.StringBuilder:
		b.Append([]string{"", "a", "ab", "b", "é", "zz", "Z", "a\x00", "日本"}[i+4])
	case *array.LargeStringBuilder:
		b.Append([]string{"", "a", "ab", "b", "é", "zz", "Z", "a\x00", "日本"}[i+4])
	case *array.TimestampBuilder:
		b.Append(arrow.Timestamp(int64(i) * 1_500_000_001))
	default:
		t.Fatalf("no values for %T", b)
	}
}
