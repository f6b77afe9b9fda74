package spatial

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestMinOfMaxOfAreMathMinMax checks minOf and maxOf against math.Min and
// math.Max bit for bit, signed zeros, infinities and NaN included.
func TestMinOfMaxOfAreMathMinMax(t *testing.T) {
	vals := []float64{0, math.Copysign(0, -1), 1, -1, 1e-300, -1e300, math.Inf(1), math.Inf(-1), math.NaN(), math.MaxFloat64, math.SmallestNonzeroFloat64}
	for _, a := range vals {
		for _, b := range vals {
			assert.Equal(t, math.Float64bits(math.Min(a, b)), math.Float64bits(minOf(a, b)), "min(%v, %v)", a, b)
			assert.Equal(t, math.Float64bits(math.Max(a, b)), math.Float64bits(maxOf(a, b)), "max(%v, %v)", a, b)
		}
	}
}
