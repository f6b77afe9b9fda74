package bench

import "github.com/geocompact/geocompact/spatial"

// RowBounds returns the bounding boxes of the rows Generate writes for
// cfg, in arrival order, without writing anything: layouts can be weighed
// in memory on exactly the rows a generated table holds. Table and
// Commits do not change the rows and may be left unset.
func RowBounds(cfg GenerateConfig) ([]spatial.Bound, error) {
	if cfg.Table == "" {
		cfg.Table = "bench.rows"
	}
	if cfg.Commits == 0 {
		cfg.Commits = 1
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	s, err := newSampler(cfg.Seed, cfg.Extent, cfg.Distribution, cfg.Geometry)
	if err != nil {
		return nil, err
	}
	out := make([]spatial.Bound, cfg.Rows)
	buf := make([]byte, 0, 256)
	for i := range out {
		s.rng.IntN(10000) // the device id buildBatch draws first
		buf, out[i] = s.geometry(buf[:0])
	}
	return out, nil
}
