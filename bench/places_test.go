package bench

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/spatial"
)

// TestPlacesFixture checks that the embedded fixture is the file
// data/README.md describes: its checksum and its places.
func TestPlacesFixture(t *testing.T) {
	t.Parallel()
	sum := sha256.Sum256(placesGz)
	assert.Equal(t, "767b57f8e6bf99f1bb730e8686d4d239fbe62747691f228388edd1c7d55ed74e", hex.EncodeToString(sum[:]))
	ps, err := loadPlaces()
	require.NoError(t, err)
	require.Len(t, ps, 34006)
	var tokyo place
	total := 0.0
	for _, p := range ps {
		assert.True(t, spatial.World.Contains(p.x, p.y), "%+v", p)
		total += p.population
		if p.population > tokyo.population {
			tokyo = p
		}
	}
	// The most populous place of GeoNames' list is near Shanghai or
	// Tokyo; either way it is in East Asia.
	assert.InDelta(t, 125, tokyo.x, 20)
	assert.InDelta(t, 33, tokyo.y, 10)
	assert.Greater(t, total, 3e9)
}

// TestPlacesDistribution checks the places pings: reproducible, inside the
// extent, most of them within a few spreads of a place and none on the
// open ocean far from one, and drawn by population.
func TestPlacesDistribution(t *testing.T) {
	t.Parallel()
	cfg := GenerateConfig{Rows: 20000, Distribution: Places, Seed: 3}
	rows, err := RowBounds(cfg)
	require.NoError(t, err)
	again, err := RowBounds(cfg)
	require.NoError(t, err)
	assert.Equal(t, rows, again)
	// Tokyo's square degree (a place of 8 million and its neighbours)
	// holds far more pings than an even spread over the land would put
	// there (about 1/15,000 of the land).
	tokyo := spatial.Bound{MinX: 139, MinY: 35, MaxX: 140.5, MaxY: 36.5}
	pacific := spatial.Bound{MinX: -150, MinY: -30, MaxX: -130, MaxY: 10}
	in, ocean := 0, 0
	for _, r := range rows {
		require.True(t, spatial.World.Contains(r.MinX, r.MinY))
		cx, cy := r.Center()
		if tokyo.Contains(cx, cy) {
			in++
		}
		if pacific.Contains(cx, cy) {
			ocean++
		}
	}
	assert.Greater(t, in, 100, "pings around Tokyo")
	assert.Less(t, ocean, 20, "pings on the open Pacific")

	checkStaysInExtent(t, Places)
}

// checkStaysInExtent checks that dist, given an extent (Europe), puts
// every row inside it.
func checkStaysInExtent(t *testing.T, dist Distribution) {
	t.Helper()
	europe := spatial.Bound{MinX: -10, MinY: 35, MaxX: 30, MaxY: 60}
	rows, err := RowBounds(GenerateConfig{Rows: 2000, Distribution: dist, Seed: 3, Extent: europe})
	require.NoError(t, err)
	for _, r := range rows {
		assert.True(t, europe.Contains(r.MinX, r.MinY))
	}
}

// TestPlacesBadExtent checks that an extent without places is refused by
// Validate, naming the distribution.
func TestPlacesBadExtent(t *testing.T) {
	t.Parallel()
	cfg := GenerateConfig{Table: "g.t", Rows: 10, Commits: 1, Distribution: Places, Extent: spatial.Bound{MinX: 1000, MinY: 1000, MaxX: 2000, MaxY: 2000}}
	err := cfg.Validate()
	require.ErrorIs(t, err, ErrGenerate)
	assert.Contains(t, err.Error(), "places")
	_, err = ParseDistribution("cities")
	assert.ErrorContains(t, err, "uniform, clustered, places or tracks")
	assert.InDelta(t, 16, placeSpread(1e6), 1e-9)
	assert.False(t, math.IsNaN(placeSpread(0)))
}
