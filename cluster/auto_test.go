package cluster

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/spatial"
)

// blobs returns n points around a few centres of unequal weight.
func blobs(rng *rand.Rand, n int) []spatial.Bound {
	centres := [][3]float64{{-100, 40, 3}, {10, 50, 5}, {120, 30, 2}, {-60, -20, 8}}
	out := make([]spatial.Bound, n)
	for i := range out {
		c := centres[min(len(centres)-1, int(rng.ExpFloat64()))]
		out[i] = pt(c[0]+rng.NormFloat64()*c[2], c[1]+rng.NormFloat64()*c[2])
	}
	return out
}

func TestChoose(t *testing.T) {
	sample := blobs(rand.New(rand.NewPCG(1, 1)), 20000)
	cfg := ChooseConfig{Files: 40, Extent: spatial.World}
	ch, err := Choose(sample, cfg)
	require.NoError(t, err)
	assert.Equal(t, 40, ch.Files)
	assert.Equal(t, len(sample), ch.Sample)
	assert.Equal(t, []string{"0.1%", "1%"}, ch.Windows)
	require.Len(t, ch.Estimates, len(AutoCandidates()))
	best := ch.Estimates[0]
	for i, e := range ch.Estimates {
		assert.Equal(t, AutoCandidates()[i], e.Curve)
		require.Len(t, e.Planned, 2)
		assert.GreaterOrEqual(t, e.Planned[0], 1.0, "%s: a data-placed window meets at least one file", e.Curve)
		assert.Greater(t, e.Planned[1], e.Planned[0], "%s: larger windows plan more files", e.Curve)
		if e.Score < best.Score {
			best = e
		}
	}
	assert.Equal(t, best.Curve, ch.Curve)
	want, err := CurveOrder(ch.Curve)
	require.NoError(t, err)
	assert.Equal(t, want, ch.Order)

	again, err := Choose(sample, cfg)
	require.NoError(t, err)
	assert.Equal(t, ch, again, "the same input gives the same choice")
}

// TestChooseTies checks that the earlier candidate wins a tie: points on
// a vertical line are ordered by y by every layout.
func TestChooseTies(t *testing.T) {
	var sample []spatial.Bound
	for i := range 1000 {
		sample = append(sample, pt(5, float64(i)))
	}
	windows := []WindowSet{{Name: "w", Windows: []spatial.Bound{{MinX: 4, MinY: 100, MaxX: 6, MaxY: 150}}}}
	ch, err := Choose(sample, ChooseConfig{Files: 10, Windows: windows, Candidates: []string{"hilbert", "linear"}})
	require.NoError(t, err)
	assert.Equal(t, "hilbert", ch.Curve)
	assert.Equal(t, ch.Estimates[0].Score, ch.Estimates[1].Score)
	assert.Equal(t, []float64{1}, ch.Estimates[0].Planned)
}

func TestChooseErrors(t *testing.T) {
	sample := []spatial.Bound{pt(1, 1), pt(2, 2)}
	_, err := Choose(sample, ChooseConfig{})
	assert.ErrorContains(t, err, "0 files")
	_, err = Choose(sample, ChooseConfig{Files: 2, Candidates: []string{"peano"}})
	assert.ErrorIs(t, err, ErrSortOrder)
	_, err = Choose(nil, ChooseConfig{Files: 2})
	assert.ErrorIs(t, err, ErrWindows)
}

func TestAreaName(t *testing.T) {
	for area, want := range map[float64]string{0.001: "0.1%", 0.01: "1%", 0.0005: "0.05%", 1: "100%"} {
		assert.Equal(t, want, AreaName(area))
	}
}
