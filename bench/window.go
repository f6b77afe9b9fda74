package bench

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"

	"github.com/geocompact/geocompact/cluster"
	"github.com/geocompact/geocompact/spatial"
)

// ErrWindows marks a window set or window configuration that cannot be used.
var ErrWindows = errors.New("bench: bad windows")

// Placement says where generated windows go.
type Placement string

// spatial.Bound placements.
const (
	// PlaceData centres each window on a row drawn at random from the
	// table, so windows go where the data is (and where queries go).
	PlaceData Placement = "data"
	// PlaceUniform places windows uniformly at random inside the extent.
	PlaceUniform Placement = "uniform"
)

// ParsePlacement parses "data" or "uniform".
func ParsePlacement(s string) (Placement, error) {
	switch p := Placement(s); p {
	case PlaceData, PlaceUniform:
		return p, nil
	}
	return "", fmt.Errorf("%w: placement %q: want data or uniform", ErrWindows, s)
}

// WindowConfig describes a generated window set.
type WindowConfig struct {
	// Count is the number of windows (default 100).
	Count int
	// Area is each window's area as a fraction of the extent's area, in
	// (0, 1] (default 0.01). Windows have the extent's aspect ratio, so
	// each side is sqrt(Area) times the extent's side.
	Area float64
	// Placement is data (default) or uniform.
	Placement Placement
	// Seed makes the set reproducible: the same seed, extent and rows give
	// the same windows.
	Seed uint64
}

// Default window set figures.
const (
	DefaultWindowCount = 100
	DefaultWindowArea  = 0.01
)

func (c WindowConfig) withDefaults() WindowConfig {
	if c.Count == 0 {
		c.Count = DefaultWindowCount
	}
	if c.Area == 0 {
		c.Area = DefaultWindowArea
	}
	if c.Placement == "" {
		c.Placement = PlaceData
	}
	return c
}

// Validate reports the first problem with the config.
func (c WindowConfig) Validate() error {
	c = c.withDefaults()
	switch {
	case c.Count < 0:
		return fmt.Errorf("%w: window count must be positive, got %d", ErrWindows, c.Count)
	case !(c.Area > 0 && c.Area <= 1):
		return fmt.Errorf("%w: window area must be in (0, 1], got %g", ErrWindows, c.Area)
	}
	_, err := ParsePlacement(string(c.Placement))
	return err
}

// GenerateWindows draws cfg.Count windows over extent. With data
// placement each window is centred on the bbox centre of a row drawn
// uniformly from rows (rows with an empty bbox are skipped), so it may
// reach past the extent's edge (cluster.DataWindows, which a rewrite's
// automatic layout choice draws its windows with); with uniform placement
// each window lies inside the extent. The result depends only on cfg,
// extent and rows.
func GenerateWindows(cfg WindowConfig, extent spatial.Bound, rows []spatial.Bound) ([]spatial.Bound, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if extent.IsEmpty() {
		return nil, fmt.Errorf("%w: the table has no extent (no rows with a bbox)", ErrWindows)
	}
	if cfg.Placement != PlaceUniform {
		bs, err := cluster.DataWindows(rows, extent, cfg.Area, cfg.Count, cfg.Seed)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrWindows, err)
		}
		return bs, nil
	}
	side := math.Sqrt(cfg.Area)
	w, h := extent.Width()*side, extent.Height()*side
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x6265_6e63_685f_7769)) // "bench_wi"
	out := make([]spatial.Bound, 0, cfg.Count)
	for range cfg.Count {
		cx := extent.MinX + w/2 + rng.Float64()*(extent.Width()-w)
		cy := extent.MinY + h/2 + rng.Float64()*(extent.Height()-h)
		out = append(out, spatial.Bound{MinX: cx - w/2, MinY: cy - h/2, MaxX: cx + w/2, MaxY: cy + h/2})
	}
	return out, nil
}

// ReadWindows reads a JSON array of windows. Every window must be finite
// with min <= max on both axes.
func ReadWindows(r io.Reader) ([]spatial.Bound, error) {
	var ws []spatial.Bound
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ws); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrWindows, err)
	}
	if len(ws) == 0 {
		return nil, fmt.Errorf("%w: the file holds no windows", ErrWindows)
	}
	for i, w := range ws {
		for _, v := range []float64{w.MinX, w.MinY, w.MaxX, w.MaxY} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%w: window %d has a non-finite coordinate", ErrWindows, i)
			}
		}
		if w.MinX > w.MaxX || w.MinY > w.MaxY {
			return nil, fmt.Errorf("%w: window %d has min above max", ErrWindows, i)
		}
	}
	return ws, nil
}
