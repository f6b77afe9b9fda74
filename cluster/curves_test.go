package cluster

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCurveRegistry(t *testing.T) {
	assert.Equal(t, []string{"linear", "zorder", "hilbert", "str", "kd", "auto"}, CurveNames())
	assert.Equal(t, []string{"linear", "zorder", "hilbert", "str", "kd"}, OrderNames())
	assert.Equal(t, []string{"linear", "zorder", "hilbert", "str", "kd"}, AutoCandidates())
	assert.Equal(t, []string{"linear", "zorder", "hilbert", "kd"}, BenchedCurves())
	assert.Equal(t, []string{"str", "auto"}, OtherCurves())
	for _, c := range Curves() {
		if c.Auto {
			continue
		}
		assert.Equal(t, c.Name, c.Curve.String(), "a curve's String is its registry name")
		o, err := CurveOrder(c.Name)
		require.NoError(t, err)
		assert.Equal(t, c.Curve, o.Curve)
		if c.Function {
			back, err := ParseOrder(c.Name + "()")
			require.NoError(t, err, "every function curve parses as name()")
			assert.Equal(t, c.Curve, back.Curve)
			assert.Equal(t, c.MaxColumns, curveArgs(c.Curve))
		}
	}
}

func TestParseCurveAuto(t *testing.T) {
	_, auto, err := ParseCurve(" AUTO")
	require.NoError(t, err)
	assert.True(t, auto)
	_, err = CurveOrder("auto")
	require.Error(t, err, "auto is no single order")
	assert.Contains(t, err.Error(), `unknown curve "auto" (want linear, zorder, hilbert, str or kd)`)
	_, _, err = ParseCurve("hilbrt")
	require.True(t, errors.Is(err, ErrSortOrder))
	assert.Contains(t, err.Error(), `unknown curve "hilbrt" (want linear, zorder, hilbert, str, kd or auto); did you mean hilbert?`)
}

func TestCurveRegistryIsCopied(t *testing.T) {
	c := Curves()
	c[0].Name = "changed"
	assert.Equal(t, "linear", Curves()[0].Name, "callers cannot change the registry")
}
