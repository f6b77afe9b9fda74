package cluster

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/geocompact/geocompact/spatial"
)

// ErrWindows reports windows that cannot be drawn: no extent, no rows
// with a box, or an area outside (0, 1].
var ErrWindows = errors.New("cluster: windows")

// DataWindows draws count query windows where the data is: each is
// centred on the box centre of a row drawn uniformly from rows (rows
// without a box are skipped), so it may reach past the extent's edge. Each
// covers area, a fraction of extent's area in (0, 1], with extent's
// aspect ratio: each side is sqrt(area) times the extent's. The result
// depends only on its arguments.
func DataWindows(rows []spatial.Bound, extent spatial.Bound, area float64, count int, seed uint64) ([]spatial.Bound, error) {
	switch {
	case !(area > 0 && area <= 1):
		return nil, fmt.Errorf("%w: window area must be in (0, 1], got %g", ErrWindows, area)
	case count < 0:
		return nil, fmt.Errorf("%w: window count must be positive, got %d", ErrWindows, count)
	case extent.IsEmpty():
		return nil, fmt.Errorf("%w: the table has no extent (no rows with a bbox)", ErrWindows)
	case len(rows) == 0:
		return nil, fmt.Errorf("%w: data placement needs rows", ErrWindows)
	}
	side := math.Sqrt(area)
	w, h := extent.Width()*side, extent.Height()*side
	rng := rand.New(rand.NewPCG(seed, 0x6265_6e63_685f_7769))
	out := make([]spatial.Bound, 0, count)
	for len(out) < count {
		r := rows[rng.IntN(len(rows))]
		if r.IsEmpty() {
			if !anyBox(rows) {
				return nil, fmt.Errorf("%w: no row has a bbox", ErrWindows)
			}
			continue
		}
		cx, cy := r.Center()
		out = append(out, spatial.Bound{MinX: cx - w/2, MinY: cy - h/2, MaxX: cx + w/2, MaxY: cy + h/2})
	}
	return out, nil
}

func anyBox(rows []spatial.Bound) bool {
	for _, r := range rows {
		if !r.IsEmpty() {
			return true
		}
	}
	return false
}
