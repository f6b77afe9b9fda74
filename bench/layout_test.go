package bench

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/cluster"
)

func TestParseLayoutsTakesEveryCurve(t *testing.T) {
	t.Parallel()
	for _, name := range cluster.CurveNames() {
		ls, err := ParseLayouts(" " + name)
		require.NoError(t, err, name)
		assert.Equal(t, []Layout{Layout(name)}, ls)
	}
	assert.Equal(t, []Layout{Current, Unsorted, BinPack, "linear", "zorder", "hilbert", "kd"}, AllLayouts)
	_, err := ParseLayouts("hilbert,peano")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown layout "peano": want current, unsorted, binpack, linear, zorder, hilbert, kd, str or auto`)
	_, err = ParseLayouts("kd,KD")
	assert.ErrorContains(t, err, `layout "kd" given twice`)
}
