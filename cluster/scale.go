package cluster

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/geocompact/geocompact/spatial"
)

// Stats learns, one batch at a time, the normalisation a Sorter's curve
// keys need (quantiles, numeric ranges, the extent of the box centres), so
// that rows can be keyed in several passes, or a few at a time, and still
// get the keys one sort of all the rows would give them. Feed it every row
// once, in a fixed order; the sample it draws depends only on that order
// and on the row count it was created with.
type Stats struct {
	s        *Sorter
	st       []dimStats
	base     int
	stride   int
	needData bool
	sc       scratch
}

// Scale is a frozen normalisation: see Stats.Scale and Sorter.WithScale.
type Scale struct {
	norms []dimNorm
}

// NewStats returns empty statistics for s's order. rows is the number of
// rows expected (an estimate is fine: it only sets the sampling stride);
// two Stats created with the same rows and fed the same rows in the same
// order give the same Scale.
func (s *Sorter) NewStats(rows int) *Stats {
	st := &Stats{s: s, stride: max(1, rows/sampleSize)}
	if s.order.Curve == CurveLinear {
		return st
	}
	st.needData = s.sampled() || len(s.numeric) > 0 || s.opts.Extent.IsEmpty()
	st.st = make([]dimStats, len(s.dims))
	for d := range st.st {
		st.st[d] = dimStats{lo: math.Inf(1), hi: math.Inf(-1), minEnc: math.MaxUint64}
	}
	return st
}

// Add folds rec, a batch with the Sorter's schema, into the statistics.
func (st *Stats) Add(rec arrow.RecordBatch) error {
	if _, err := st.s.checkBatches([]arrow.RecordBatch{rec}); err != nil {
		return err
	}
	return st.add(rec)
}

func (st *Stats) add(rec arrow.RecordBatch) error {
	if st.needData {
		if err := st.s.collect(rec, st.st, &st.sc, st.base, st.stride, st.s.sampled()); err != nil {
			return err
		}
	}
	st.base += int(rec.NumRows())
	return nil
}

// Rows is the number of rows added so far.
func (st *Stats) Rows() int { return st.base }

// Scale returns the normalisation learned. Spatial axes are normalised over
// extent when it is not empty, else over SortOptions.Extent, else over the
// extent of the box centres seen. A linear order has nothing to learn and
// returns an empty Scale.
func (st *Stats) Scale(extent spatial.Bound) Scale {
	if st.s.order.Curve == CurveLinear {
		return Scale{}
	}
	return Scale{norms: st.s.finish(st.st, extent)}
}

// WithScale returns a copy of s that keys rows with sc instead of learning
// a normalisation from the rows it is given. sc must come from Stats of a
// Sorter with the same order (over the same or a projected schema).
func (s *Sorter) WithScale(sc Scale) (*Sorter, error) {
	if len(sc.norms) != len(s.dims) {
		return nil, fmt.Errorf("cluster: scale has %d dimensions, order %s has %d", len(sc.norms), s.order, len(s.dims))
	}
	c := *s
	c.scale = sc.norms
	if c.scale == nil {
		c.scale = []dimNorm{}
	}
	return &c, nil
}

// Columns returns the names of the top-level columns s reads to key a
// row, in schema order: a projection of just these columns keys rows as
// the whole schema does.
func (s *Sorter) Columns() []string {
	used := map[int]bool{}
	for _, f := range s.fields {
		if !f.corner {
			used[f.col] = true
		}
	}
	for _, src := range s.spatial {
		if src.kind == fromBBoxColumns {
			for _, c := range src.cols {
				used[c] = true
			}
		} else {
			used[src.col] = true
		}
	}
	for _, c := range s.numeric {
		used[c] = true
	}
	var out []string
	for i, f := range s.schema.Fields() {
		if used[i] {
			out = append(out, f.Name)
		}
	}
	return out
}

// Permutation returns the row numbers of recs (counted across the batches
// in order) in s's order: stable, so rows with equal keys keep their input
// order. It holds 12 bytes per row besides its result. Gather turns runs
// of the result into record batches.
func (s *Sorter) Permutation(recs []arrow.RecordBatch) ([]int32, error) {
	perm, _, err := s.SortedKeys(recs)
	return perm, err
}

// SortedKeys is Permutation that also returns the rows' keys in that
// order (nil for a linear order, which is not sorted by one key), so that
// a writer can cut files at the layout's cells (CutShift) without keying
// the rows again.
func (s *Sorter) SortedKeys(recs []arrow.RecordBatch) ([]int32, []uint64, error) {
	total, err := s.checkBatches(recs)
	if err != nil {
		return nil, nil, err
	}
	if total == 0 {
		return []int32{}, nil, nil
	}
	if s.order.Curve == CurveLinear {
		perm, err := s.linearPermutation(recs, total)
		return perm, nil, err
	}
	return s.curvePermutation(recs, total)
}

// scaleJSON is a Scale's wire form. Floats travel as their IEEE bits so a
// Scale decoded in another process keys rows exactly as the original.
type scaleJSON struct {
	Dims []dimJSON `json:"dims"`
}

type dimJSON struct {
	Kind      int      `json:"kind"`
	AxisLo    uint64   `json:"axis_lo,omitempty"`
	AxisScale uint64   `json:"axis_scale,omitempty"`
	AxisLimit uint64   `json:"axis_limit,omitempty"`
	AxisLast  uint32   `json:"axis_last,omitempty"`
	RangeMin  uint64   `json:"range_min,omitempty"`
	RangeBits uint     `json:"range_shift,omitempty"`
	Quantiles []uint64 `json:"quantiles,omitempty"`
	QCells    uint64   `json:"q_cells,omitempty"`
	QLast     uint32   `json:"q_last,omitempty"`
	Slabs     []uint32 `json:"slabs,omitempty"`
	KD        []kdNode `json:"kd,omitempty"`
	KDLeaves  int      `json:"kd_leaves,omitempty"`
}

// MarshalJSON encodes the scale losslessly, so that workers in other
// processes can key rows with the scale the driver learned.
func (s Scale) MarshalJSON() ([]byte, error) {
	out := scaleJSON{}
	if len(s.norms) > 0 {
		out.Dims = make([]dimJSON, len(s.norms))
	}
	for i, n := range s.norms {
		d := dimJSON{Kind: int(n.kind),
			AxisLo: math.Float64bits(n.ax.lo), AxisScale: math.Float64bits(n.ax.scale), AxisLimit: math.Float64bits(n.ax.limit), AxisLast: n.ax.last,
			RangeMin: n.rng.min, RangeBits: n.rng.shift,
			QCells: math.Float64bits(n.q.cells), QLast: n.q.last, Slabs: n.slabs}
		if n.kd != nil {
			d.KD, d.KDLeaves = n.kd.nodes, n.kd.leaves
		}
		for _, q := range n.q.q {
			d.Quantiles = append(d.Quantiles, math.Float64bits(q))
		}
		out.Dims[i] = d
	}
	return json.Marshal(out)
}

// UnmarshalJSON decodes a scale written by MarshalJSON.
func (s *Scale) UnmarshalJSON(b []byte) error {
	var in scaleJSON
	if err := json.Unmarshal(b, &in); err != nil {
		return fmt.Errorf("cluster: decode scale: %w", err)
	}
	if len(in.Dims) == 0 {
		*s = Scale{}
		return nil
	}
	norms := make([]dimNorm, len(in.Dims))
	for i, d := range in.Dims {
		if d.Kind < int(normAxis) || d.Kind > int(normQuantile) {
			return fmt.Errorf("cluster: decode scale: dimension %d has unknown kind %d", i, d.Kind)
		}
		n := dimNorm{kind: normKind(d.Kind),
			ax:  axis{lo: math.Float64frombits(d.AxisLo), scale: math.Float64frombits(d.AxisScale), limit: math.Float64frombits(d.AxisLimit), last: d.AxisLast},
			rng: rangeBits{min: d.RangeMin, shift: d.RangeBits},
			q:   quantiles{cells: math.Float64frombits(d.QCells), last: d.QLast}, slabs: d.Slabs}
		if d.KDLeaves > 0 {
			n.kd = &kdTree{nodes: d.KD, leaves: d.KDLeaves}
			if err := n.kd.check(); err != nil {
				return fmt.Errorf("cluster: decode scale: dimension %d: %w", i, err)
			}
		}
		for _, q := range d.Quantiles {
			n.q.q = append(n.q.q, math.Float64frombits(q))
		}
		norms[i] = n
	}
	s.norms = norms
	return nil
}

// ExtentScale returns the Scale that Stats fed any rows would give for
// extent, without reading them, when s's order needs nothing of the rows
// but their extent: a curve (not linear, str or kd) over spatial columns
// only, normalised over the extent, and extent not empty. A table's file
// statistics can then stand in for a pass over its rows. It reports false
// otherwise: quantiles, numeric ranges and the slabs and leaves of str and
// kd come from the rows themselves.
func (s *Sorter) ExtentScale(extent spatial.Bound) (Scale, bool) {
	if s.order.Curve == CurveLinear || s.sampled() || len(s.numeric) > 0 || extent.IsEmpty() {
		return Scale{}, false
	}
	return s.NewStats(0).Scale(extent), true
}
