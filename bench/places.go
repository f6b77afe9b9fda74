package bench

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/geocompact/geocompact/spatial"
)

// The places distribution: GPS-like pings jittered around the world's
// populated places (GeoNames' places of at least 15,000 people; see
// data/README.md for the source, licence and checksum), each place drawn
// in proportion to its population. A ping falls near the centre of its
// place, at a spread that grows with the place's size; one in ten falls
// five times further out (suburbs, roads), so each place has a dense core
// and a long sparse tail, and places of very different sizes sit side by
// side. Windows placed on rows (bench's data placement) are then placed
// where people are.

//go:embed data/cities15000.tsv.gz
var placesGz []byte

// place is one populated place: its position (degrees) and population.
type place struct {
	x, y       float64
	population float64
}

var (
	placesOnce sync.Once
	placesAll  []place
	placesErr  error
)

// loadPlaces parses the embedded fixture once.
func loadPlaces() ([]place, error) {
	placesOnce.Do(func() { placesAll, placesErr = parsePlaces(placesGz) })
	return placesAll, placesErr
}

// parsePlaces reads gzipped "lon\tlat\tpopulation" lines after a header.
func parsePlaces(gz []byte) ([]place, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("places fixture: %w", err)
	}
	sc := bufio.NewScanner(zr)
	var out []place
	for line := 0; sc.Scan(); line++ {
		if line == 0 {
			continue
		}
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 3 {
			return nil, fmt.Errorf("places fixture: line %d: want 3 fields, got %d", line+1, len(f))
		}
		var v [3]float64
		for i, s := range f {
			if v[i], err = strconv.ParseFloat(s, 64); err != nil {
				return nil, fmt.Errorf("places fixture: line %d: %w", line+1, err)
			}
		}
		out = append(out, place{x: v[0], y: v[1], population: v[2]})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("places fixture: %w", err)
	}
	return out, nil
}

// placeSet is the places inside an extent with their cumulative
// population weights (the last is 1).
type placeSet struct {
	places []place
	cum    []float64
}

// newPlaceSet keeps the places inside extent that have people.
func newPlaceSet(extent spatial.Bound) (*placeSet, error) {
	all, err := loadPlaces()
	if err != nil {
		return nil, err
	}
	ps := &placeSet{}
	total := 0.0
	for _, p := range all {
		if p.population > 0 && extent.Contains(p.x, p.y) {
			total += p.population
			ps.places = append(ps.places, p)
			ps.cum = append(ps.cum, total)
		}
	}
	if len(ps.places) == 0 {
		return nil, fmt.Errorf("distributions places and tracks: no populated place lies inside the extent %v (places are in degrees of longitude and latitude)", extent)
	}
	for i := range ps.cum {
		ps.cum[i] /= total
	}
	return ps, nil
}

// pick returns the place whose cumulative weight first reaches u in [0, 1).
func (ps *placeSet) pick(u float64) place {
	i, _ := slices.BinarySearch(ps.cum, u)
	return ps.places[min(i, len(ps.places)-1)]
}

// placeSpread is the standard deviation, in km, of pings around a place
// of population pop: about 2 km for 15,000 people, 16 km for a million,
// 50 km for ten million.
func placeSpread(pop float64) float64 {
	return 16 * math.Sqrt(pop/1e6)
}

// placePosition draws one ping of the places distribution, inside the
// extent.
func (s *sampler) placePosition() (x, y float64) {
	p := s.places.pick(s.rng.Float64())
	km := placeSpread(p.population)
	if s.rng.IntN(10) == 0 {
		km *= 5
	}
	const kmPerDegree = 111.32
	sy := km / kmPerDegree
	sx := sy / math.Max(0.1, math.Cos(p.y*math.Pi/180))
	e := s.extent
	x = clamp(p.x+s.rng.NormFloat64()*sx, e.MinX, e.MaxX)
	y = clamp(p.y+s.rng.NormFloat64()*sy, e.MinY, e.MaxY)
	return x, y
}
