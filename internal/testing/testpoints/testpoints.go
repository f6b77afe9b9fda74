// Package testpoints draws the generated point sets tests measure
// layouts on.
package testpoints

import (
	"math"
	"math/rand/v2"

	"github.com/geocompact/geocompact/spatial"
)

// Clustered draws n points around a few hotspots of a world-sized
// extent, with a uniform background, as generated tables cluster.
func Clustered(rng *rand.Rand, n int) []spatial.Bound {
	type spot struct{ x, y, sd, w float64 }
	spots := []spot{{2, 48, 3, 5}, {-74, 40, 4, 3}, {116, 39, 5, 4}, {77, 20, 6, 4}, {-46, -23, 4, 2}, {139, 35, 3, 3}, {30, 0, 10, 1}}
	var total float64
	for _, s := range spots {
		total += s.w
	}
	out := make([]spatial.Bound, n)
	for i := range out {
		var x, y float64
		if rng.Float64() < 0.1 {
			x, y = rng.Float64()*360-180, rng.Float64()*170-85
		} else {
			r := rng.Float64() * total
			s := spots[0]
			for _, c := range spots {
				if r -= c.w; r <= 0 {
					s = c
					break
				}
			}
			x = math.Max(-180, math.Min(180, s.x+rng.NormFloat64()*s.sd))
			y = math.Max(-85, math.Min(85, s.y+rng.NormFloat64()*s.sd/2))
		}
		out[i] = spatial.Bound{MinX: x, MinY: y, MaxX: x, MaxY: y}
	}
	return out
}
