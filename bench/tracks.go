package bench

import "math"

// The tracks distribution: the pings of a fleet of vehicles driving
// between the world's populated places (the places fixture). A vehicle
// starts at a place drawn by population, drives in a straight line to a
// place within a few hundred kilometres (drawn by population among the
// places near it; one drawn from the whole set when none is near), waits
// there for a while and drives on. Each ping comes from a vehicle drawn at
// random, so consecutive rows, and so each commit, are spread over the
// whole fleet, as a stream of telemetry is. The rows lie along lines
// between places, dense where roads converge on cities: a clustering
// unlike the places distribution's round clouds.

const (
	// trackFleet is the number of vehicles.
	trackFleet = 256
	// trackCell is the side, in degrees, of the grid cells that find the
	// places near a vehicle; a next stop is within the 3 × 3 cells around
	// it, at most about 2 × trackCell degrees away.
	trackCell = 1.5
	// trackNoise is the standard deviation, in degrees, of a ping's
	// distance from the vehicle's true position (about 10 m).
	trackNoise = 0.0001
	// trackMaxDwell is the most pings a vehicle sends waiting at a stop.
	trackMaxDwell = 60
)

// vehicle is one member of the fleet.
type vehicle struct {
	x, y   float64 // true position, degrees
	to     place   // the place it drives to
	step   float64 // distance per ping, degrees
	dwell  int     // pings left waiting at its stop
	moving bool
}

// fleet is the tracks distribution's state.
type fleet struct {
	vehicles []vehicle
	cells    map[[2]int][]place // places by grid cell of trackCell degrees
}

// newFleet places n vehicles at places drawn by population.
func (s *sampler) newFleet(n int) *fleet {
	f := &fleet{cells: map[[2]int][]place{}}
	for _, p := range s.places.places {
		c := trackCellOf(p.x, p.y)
		f.cells[c] = append(f.cells[c], p)
	}
	for range n {
		p := s.places.pick(s.rng.Float64())
		v := vehicle{x: p.x, y: p.y, to: p, step: 0.002 + 0.018*s.rng.Float64()}
		v.dwell = s.rng.IntN(trackMaxDwell + 1)
		f.vehicles = append(f.vehicles, v)
	}
	return f
}

func trackCellOf(x, y float64) [2]int {
	return [2]int{int(math.Floor(x / trackCell)), int(math.Floor(y / trackCell))}
}

// nextStop draws where a vehicle at (x, y) drives next: a place in the
// cells around it other than where it is, by population, or any place by
// population when none is near.
func (s *sampler) nextStop(x, y float64) place {
	c := trackCellOf(x, y)
	var near []place
	total := 0.0
	for dx := -1; dx <= 1; dx++ {
		for dy := -1; dy <= 1; dy++ {
			for _, p := range s.fleet.cells[[2]int{c[0] + dx, c[1] + dy}] {
				if p.x == x && p.y == y {
					continue
				}
				near = append(near, p)
				total += p.population
			}
		}
	}
	if len(near) == 0 {
		return s.places.pick(s.rng.Float64())
	}
	u := s.rng.Float64() * total
	for _, p := range near {
		if u -= p.population; u < 0 {
			return p
		}
	}
	return near[len(near)-1]
}

// trackPosition draws one ping of the tracks distribution, inside the
// extent: a random vehicle waits or moves one step, and reports where it
// is, give or take the receiver's noise.
func (s *sampler) trackPosition() (x, y float64) {
	v := &s.fleet.vehicles[s.rng.IntN(len(s.fleet.vehicles))]
	switch {
	case v.dwell > 0:
		v.dwell--
	case !v.moving:
		v.to = s.nextStop(v.x, v.y)
		v.moving = true
	}
	if v.moving {
		dx, dy := v.to.x-v.x, v.to.y-v.y
		if d := math.Hypot(dx, dy); d <= v.step {
			v.x, v.y = v.to.x, v.to.y
			v.moving = false
			v.dwell = s.rng.IntN(trackMaxDwell + 1)
		} else {
			v.x += dx / d * v.step
			v.y += dy / d * v.step
		}
	}
	e := s.extent
	x = clamp(v.x+s.rng.NormFloat64()*trackNoise, e.MinX, e.MaxX)
	y = clamp(v.y+s.rng.NormFloat64()*trackNoise, e.MinY, e.MaxY)
	return x, y
}
