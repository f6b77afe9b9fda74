package bench

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/geocompact/geocompact/spatial"
)

// Distribution is where generated geometries fall.
type Distribution string

// Distributions the generator knows.
const (
	// Uniform spreads geometries evenly over the extent.
	Uniform Distribution = "uniform"
	// Clustered draws most geometries around a few dozen hotspots of very
	// unequal weight (like GPS pings around cities) over a thin uniform
	// background: the skew that defeats naive layouts.
	Clustered Distribution = "clustered"
	// Places draws GPS-like pings around the world's populated places,
	// weighted by population (see places.go): real skew, with dense cores,
	// long sparse tails and empty oceans. Positions are in degrees.
	Places Distribution = "places"
	// Tracks draws the pings of a fleet of vehicles driving between
	// populated places (see tracks.go): rows along lines, interleaved
	// over the fleet as a telemetry stream arrives. Positions are in
	// degrees.
	Tracks Distribution = "tracks"
)

// GeometryKind is the shape of generated geometries.
type GeometryKind string

// Geometry kinds the generator knows.
const (
	Points   GeometryKind = "points"
	Lines    GeometryKind = "lines"
	Polygons GeometryKind = "polygons"
)

// ParseDistribution checks a --distribution value.
func ParseDistribution(s string) (Distribution, error) {
	switch d := Distribution(s); d {
	case Uniform, Clustered, Places, Tracks:
		return d, nil
	}
	return "", fmt.Errorf("distribution %q: want uniform, clustered, places or tracks", s)
}

// ParseGeometryKind checks a --geometry value.
func ParseGeometryKind(s string) (GeometryKind, error) {
	switch k := GeometryKind(s); k {
	case Points, Lines, Polygons:
		return k, nil
	}
	return "", fmt.Errorf("geometry %q: want points, lines or polygons", s)
}

// hotspot is one centre of a clustered distribution.
type hotspot struct {
	x, y, sigma float64
	weight      float64 // cumulative
}

// sampler draws positions and shapes deterministically from one seed.
type sampler struct {
	rng      *rand.Rand
	extent   spatial.Bound
	dist     Distribution
	kind     GeometryKind
	hotspots []hotspot
	places   *placeSet
	fleet    *fleet
	scale    float64 // a typical small feature size: 1/2000 of the extent's width
}

func newSampler(seed uint64, extent spatial.Bound, dist Distribution, kind GeometryKind) (*sampler, error) {
	s := &sampler{
		rng:    rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		extent: extent, dist: dist, kind: kind,
		scale: extent.Width() / 2000,
	}
	if dist == Places || dist == Tracks {
		var err error
		if s.places, err = newPlaceSet(extent); err != nil {
			return nil, err
		}
	}
	if dist == Tracks {
		s.fleet = s.newFleet(trackFleet)
	}
	if dist == Clustered {
		// 40 hotspots with Zipf-like weights: a handful of huge cities and
		// a long tail; spreads from 0.2% to 2% of the extent's width.
		var cum float64
		for i := range 40 {
			cum += 1 / math.Pow(float64(i+1), 1.1)
			s.hotspots = append(s.hotspots, hotspot{
				x:      extent.MinX + s.rng.Float64()*extent.Width(),
				y:      extent.MinY + (0.15+0.7*s.rng.Float64())*extent.Height(),
				sigma:  extent.Width() * (0.002 + 0.018*s.rng.Float64()),
				weight: cum,
			})
		}
		for i := range s.hotspots {
			s.hotspots[i].weight /= cum
		}
	}
	return s, nil
}

// position draws one point of the distribution, inside the extent.
func (s *sampler) position() (x, y float64) {
	switch s.dist {
	case Places:
		return s.placePosition()
	case Tracks:
		return s.trackPosition()
	}
	e := s.extent
	if s.dist == Uniform || s.rng.Float64() < 0.05 {
		return e.MinX + s.rng.Float64()*e.Width(), e.MinY + s.rng.Float64()*e.Height()
	}
	u := s.rng.Float64()
	h := s.hotspots[len(s.hotspots)-1]
	for _, c := range s.hotspots {
		if u <= c.weight {
			h = c
			break
		}
	}
	x = clamp(h.x+s.rng.NormFloat64()*h.sigma, e.MinX, e.MaxX)
	y = clamp(h.y+s.rng.NormFloat64()*h.sigma, e.MinY, e.MaxY)
	return x, y
}

func clamp(v, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, v)) }

// geometry appends one geometry's WKB to buf and returns it with its bounds.
func (s *sampler) geometry(buf []byte) ([]byte, spatial.Bound) {
	x, y := s.position()
	switch s.kind {
	case Lines:
		return s.line(buf, x, y)
	case Polygons:
		return s.polygon(buf, x, y)
	}
	return appendPointWKB(buf, x, y), spatial.Bound{MinX: x, MinY: y, MaxX: x, MaxY: y}
}

// line is a short random walk of 2 to 8 vertices starting at (x, y).
func (s *sampler) line(buf []byte, x, y float64) ([]byte, spatial.Bound) {
	n := 2 + s.rng.IntN(7)
	xy := make([]float64, 0, 2*n)
	b := spatial.EmptyBound()
	for range n {
		xy = append(xy, x, y)
		b = b.ExtendPoint(x, y)
		x = clamp(x+s.rng.NormFloat64()*s.scale, s.extent.MinX, s.extent.MaxX)
		y = clamp(y+s.rng.NormFloat64()*s.scale, s.extent.MinY, s.extent.MaxY)
	}
	return appendLineWKB(buf, xy), b
}

// polygon is a star-shaped ring around (x, y) of varied size: mostly small
// (building to district scale), one in fifty wide (a region spanning a
// few percent to a quarter of the extent), which is what makes file bboxes
// overlap in real footprint tables.
func (s *sampler) polygon(buf []byte, x, y float64) ([]byte, spatial.Bound) {
	r := s.scale * (0.2 + 5*s.rng.ExpFloat64())
	if s.rng.IntN(50) == 0 {
		r = s.extent.Width() * (0.02 + 0.1*s.rng.Float64())
	}
	n := 4 + s.rng.IntN(8)
	ring := make([]float64, 0, 2*(n+1))
	b := spatial.EmptyBound()
	for i := range n {
		a := 2 * math.Pi * float64(i) / float64(n)
		rr := r * (0.6 + 0.4*s.rng.Float64())
		px := clamp(x+rr*math.Cos(a), s.extent.MinX, s.extent.MaxX)
		py := clamp(y+rr*math.Sin(a), s.extent.MinY, s.extent.MaxY)
		ring = append(ring, px, py)
		b = b.ExtendPoint(px, py)
	}
	ring = append(ring, ring[0], ring[1])
	return appendPolygonWKB(buf, ring), b
}
