package cluster

import (
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/geocompact/geocompact/spatial"
)

// normKind is how one curve dimension becomes grid cells.
type normKind int

const (
	normAxis     normKind = iota // linear over an extent (float values)
	normRange                    // top bits of the encoding's range (numeric)
	normQuantile                 // empirical distribution (float values)
)

type dimNorm struct {
	kind normKind
	ax   axis
	rng  rangeBits
	q    quantiles
	// slabs, for str's x axis only, are the cells where slabs 1, 2, ...
	// start (ascending).
	slabs []uint32
	// kd, for kd's x axis only, is the tree whose leaves key the rows.
	kd *kdTree
}

// dimStats accumulates what normalisation needs about one dimension.
type dimStats struct {
	lo, hi       float64 // spatial: extent of the centres
	minEnc, maxE uint64  // numeric: range of the encodings
	sample       []float64
}

// normalizers computes one normaliser per dimension of s from recs, reading
// the data only when the options leave something to learn from it. A
// Sorter given a Scale (WithScale) uses that instead.
func (s *Sorter) normalizers(recs []arrow.RecordBatch, total int, sc *scratch) ([]dimNorm, error) {
	if s.scale != nil {
		return s.scale, nil
	}
	st := s.NewStats(total)
	st.sc = *sc
	for _, rec := range recs {
		if err := st.add(rec); err != nil {
			return nil, err
		}
	}
	*sc = st.sc
	return st.Scale(spatial.EmptyBound()).norms, nil
}

// finish turns the statistics of every dimension into its normaliser.
// extent, when not empty, replaces SortOptions.Extent.
func (s *Sorter) finish(st []dimStats, extent spatial.Bound) []dimNorm {
	quantile := s.opts.Normalize == NormalizeQuantile
	if extent.IsEmpty() {
		extent = s.opts.Extent
	}
	var kdx, kdy []float64 // paired: quantiles sort the samples in place
	if s.order.Curve == CurveKD {
		kdx, kdy = slices.Clone(st[0].sample), slices.Clone(st[1].sample)
	}
	norms := make([]dimNorm, len(s.dims))
	for d, dim := range s.dims {
		if quantile {
			if q, ok := newQuantiles(st[d].sample, s.bits); ok {
				norms[d] = dimNorm{kind: normQuantile, q: q}
				continue
			}
		}
		if dim.src < 0 {
			norms[d] = dimNorm{kind: normRange, rng: newRangeBits(st[d].minEnc, st[d].maxE, s.bits)}
			continue
		}
		lo, hi := st[d].lo, st[d].hi
		if !extent.IsEmpty() {
			lo, hi = extent.MinX, extent.MaxX
			if dim.axis == 1 {
				lo, hi = extent.MinY, extent.MaxY
			}
		}
		if !(lo <= hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
			lo, hi = 0, 0 // no finite position at all: every cell is 0
		}
		norms[d] = dimNorm{kind: normAxis, ax: newAxis(lo, hi, s.bits)}
	}
	switch s.order.Curve {
	case CurveSTR:
		norms[0].slabs = slabCells(st[0].sample, norms[0], s.opts.Files)
	case CurveKD:
		norms[0].kd = buildKD(kdx, kdy, norms[0].cellFloat, norms[1].cellFloat, extent, s.opts.Files, s.opts.Windows)
	}
	return norms
}

// collect adds one batch to the statistics; base is the global row number
// of its first row.
func (s *Sorter) collect(rec arrow.RecordBatch, st []dimStats, sc *scratch, base, stride int, sample bool) error {
	n := int(rec.NumRows())
	first := (stride - base%stride) % stride // first sampled row in this batch
	for d := 0; d < len(s.dims); d++ {
		dim := s.dims[d]
		if dim.src >= 0 {
			xs, ys, err := s.spatial[dim.src].centres(rec, sc)
			if err != nil {
				return err
			}
			for k, vals := range [2][]float64{xs, ys} {
				ds := &st[d+k]
				for i, v := range vals {
					if xs[i] != xs[i] || ys[i] != ys[i] || math.IsInf(v, 0) {
						continue
					}
					ds.lo, ds.hi = min(ds.lo, v), max(ds.hi, v)
				}
				if sample {
					for i := first; i < n; i += stride {
						if xs[i] == xs[i] && ys[i] == ys[i] {
							ds.sample = append(ds.sample, vals[i])
						}
					}
				}
			}
			d++ // the y axis is done too
			continue
		}
		enc, valid := grow(&sc.enc0, n), grow(&sc.valid0, n)
		if err := encodeColumn(enc, valid, rec.Column(s.numeric[dim.num]), true); err != nil {
			return err
		}
		ds := &st[d]
		for i, e := range enc {
			if valid[i] {
				ds.minEnc, ds.maxE = min(ds.minEnc, e), max(ds.maxE, e)
			}
		}
		if sample {
			for i := first; i < n; i += stride {
				if valid[i] {
					ds.sample = append(ds.sample, float64(enc[i]))
				}
			}
		}
	}
	return nil
}

// curveKeys writes the key of every row of rec into dst.
func (s *Sorter) curveKeys(dst []uint64, rec arrow.RecordBatch, norms []dimNorm, sc *scratch) error {
	n := int(rec.NumRows())
	null := grow(&sc.null, n)
	clear(null)
	nd := len(s.dims)
	if len(sc.cells) < nd {
		sc.cells = make([][]uint32, nd)
	}
	for d := 0; d < nd; d++ {
		dim := s.dims[d]
		if dim.src >= 0 {
			xs, ys, err := s.spatial[dim.src].centres(rec, sc)
			if err != nil {
				return err
			}
			for k, vals := range [2][]float64{xs, ys} {
				cells := grow(&sc.cells[d+k], n)
				nm := norms[d+k]
				for i, v := range vals {
					if v != v {
						null[i] = true
						continue
					}
					cells[i] = nm.cellFloat(v)
				}
			}
			d++
			continue
		}
		enc, valid := grow(&sc.enc0, n), grow(&sc.valid0, n)
		if err := encodeColumn(enc, valid, rec.Column(s.numeric[dim.num]), true); err != nil {
			return err
		}
		cells := grow(&sc.cells[d], n)
		nm := norms[d]
		for i, e := range enc {
			if !valid[i] {
				null[i] = true
				continue
			}
			if nm.kind == normQuantile {
				cells[i] = nm.q.cell(float64(e))
			} else {
				cells[i] = nm.rng.cell(e)
			}
		}
	}
	switch s.order.Curve {
	case CurveSTR:
		strKeys(dst[:n], sc.cells[0], sc.cells[1], norms[0].slabs, s.bits)
		nullKeys(dst[:n], null)
		return nil
	case CurveKD:
		kdKeys(dst[:n], sc.cells[0], sc.cells[1], norms[0].kdTree(), s.bits)
		nullKeys(dst[:n], null)
		return nil
	}
	s.combine(dst[:n], sc.cells[:nd], null)
	return nil
}

func (nm *dimNorm) cellFloat(v float64) uint32 {
	if nm.kind == normQuantile {
		return nm.q.cell(v)
	}
	return nm.ax.cell(v)
}

// combine maps the per-dimension cells of each row to its curve index.
func (s *Sorter) combine(dst []uint64, cells [][]uint32, null []bool) {
	bits := s.bits
	if len(cells) == 2 {
		xs, ys := cells[0][:len(dst)], cells[1][:len(dst)]
		sh := uint(32 - bits)
		if s.order.Curve == CurveHilbert {
			for i := range dst {
				dst[i] = hilbert2(xs[i]<<sh, ys[i]<<sh) >> (2 * sh)
			}
		} else {
			for i := range dst {
				dst[i] = spread(uint64(xs[i]))<<1 | spread(uint64(ys[i]))
			}
		}
	} else {
		var buf [MaxCurveDims]uint32
		p := buf[:len(cells)]
		for i := range dst {
			for d := range cells {
				p[d] = cells[d][i]
			}
			if s.order.Curve == CurveHilbert {
				dst[i] = hilbertN(p, bits)
			} else {
				dst[i] = interleaveN(p, bits)
			}
		}
	}
	nullKeys(dst, null)
}

// nullKeys gives rows without a position NullKey and keeps every other
// key below it.
func nullKeys(dst []uint64, null []bool) {
	for i, k := range dst {
		if null[i] {
			dst[i] = NullKey
		} else if k == NullKey {
			dst[i] = NullKey - 1
		}
	}
}

// Extent returns the extent a Sorter normalises spatial positions over for
// recs: SortOptions.Extent when set, else the extent of the rows' box
// centres. It is empty when no row has a position.
func (s *Sorter) Extent(recs []arrow.RecordBatch) (spatial.Bound, error) {
	if !s.opts.Extent.IsEmpty() || len(s.spatial) == 0 {
		return s.opts.Extent, nil
	}
	var sc scratch
	b := spatial.EmptyBound()
	for _, rec := range recs {
		xs, ys, err := s.spatial[0].centres(rec, &sc)
		if err != nil {
			return b, err
		}
		for i := range xs {
			if !math.IsInf(xs[i], 0) && !math.IsInf(ys[i], 0) {
				b = b.ExtendPoint(xs[i], ys[i])
			}
		}
	}
	return b, nil
}
