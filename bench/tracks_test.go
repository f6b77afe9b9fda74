package bench

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/spatial"
)

// TestTracksDistribution checks the tracks pings: reproducible, inside the
// extent, off the open ocean, and close together: a vehicle's pings are a
// step apart, or on one spot while it waits, so a ping's nearest other
// ping is far closer than in the places distribution's clouds of as many
// pings.
func TestTracksDistribution(t *testing.T) {
	t.Parallel()
	cfg := GenerateConfig{Rows: 20000, Distribution: Tracks, Seed: 3}
	rows, err := RowBounds(cfg)
	require.NoError(t, err)
	again, err := RowBounds(cfg)
	require.NoError(t, err)
	assert.Equal(t, rows, again)
	other, err := RowBounds(GenerateConfig{Rows: 20000, Distribution: Tracks, Seed: 4})
	require.NoError(t, err)
	assert.NotEqual(t, rows, other, "the seed must matter")

	pacific := spatial.Bound{MinX: -150, MinY: -30, MaxX: -130, MaxY: 10}
	ocean := 0
	for _, r := range rows {
		require.True(t, spatial.World.Contains(r.MinX, r.MinY))
		if cx, cy := r.Center(); pacific.Contains(cx, cy) {
			ocean++
		}
	}
	assert.Less(t, ocean, 20, "pings on the open Pacific")

	places, err := RowBounds(GenerateConfig{Rows: 20000, Distribution: Places, Seed: 3})
	require.NoError(t, err)
	tracks, clouds := medianNearest(rows[:4000]), medianNearest(places[:4000])
	t.Logf("median distance to the nearest ping: tracks %.5f°, places %.5f°", tracks, clouds)
	assert.Less(t, tracks, clouds/3)

	checkStaysInExtent(t, Tracks)
}

// TestTrackVehicleDrives checks one vehicle's pings: each within a step
// (and the receiver's noise) of the last, and the vehicle reaches its
// stops rather than circling.
func TestTrackVehicleDrives(t *testing.T) {
	t.Parallel()
	s, err := newSampler(5, spatial.World, Tracks, Points)
	require.NoError(t, err)
	s.fleet.vehicles = s.fleet.vehicles[:1]
	v := &s.fleet.vehicles[0]
	px, py := s.position()
	stops := 0
	for range 20000 {
		wasMoving := v.moving
		x, y := s.position()
		assert.LessOrEqual(t, math.Hypot(x-px, y-py), v.step+10*trackNoise)
		if wasMoving && !v.moving {
			stops++
			assert.Equal(t, v.to.x, v.x)
			assert.Equal(t, v.to.y, v.y)
		}
		px, py = x, y
	}
	assert.Greater(t, stops, 5, "stops reached")
}

// TestTracksBadExtent checks that an extent without places is refused for
// tracks as for places, naming the distributions.
func TestTracksBadExtent(t *testing.T) {
	t.Parallel()
	cfg := GenerateConfig{Table: "g.t", Rows: 10, Commits: 1, Distribution: Tracks, Extent: spatial.Bound{MinX: 1000, MinY: 1000, MaxX: 2000, MaxY: 2000}}
	err := cfg.Validate()
	require.ErrorIs(t, err, ErrGenerate)
	assert.ErrorContains(t, err, "tracks: no populated place")
}

// medianNearest is the median distance from a row's centre to the nearest
// other row's centre.
func medianNearest(rows []spatial.Bound) float64 {
	d := make([]float64, len(rows))
	for i, a := range rows {
		ax, ay := a.Center()
		d[i] = math.Inf(1)
		for j, b := range rows {
			if i != j {
				bx, by := b.Center()
				d[i] = math.Min(d[i], math.Hypot(ax-bx, ay-by))
			}
		}
	}
	return median(d)
}
