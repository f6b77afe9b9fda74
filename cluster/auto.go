package cluster

import (
	"fmt"
	"math"
	"strconv"

	"github.com/geocompact/geocompact/spatial"
)

// The window sets Choose measures with when given none: AutoWindows
// data-placed windows (DataWindows) of each area in AutoAreas, a fraction
// of the extent, drawn with seed AutoSeed.
var AutoAreas = []float64{0.001, 0.01}

// AutoWindows and AutoSeed: see AutoAreas.
const (
	AutoWindows = 1000
	AutoSeed    = 1
)

// WindowSet is a named set of query windows, e.g. "1%" for data-placed
// windows of 1% of the extent's area.
type WindowSet struct {
	Name    string
	Windows []spatial.Bound
}

// ChooseConfig is what Choose needs besides the sample.
type ChooseConfig struct {
	// Files is the number of files the rows will be written to (> 0).
	Files int
	// Extent is the table's (or partition's) extent: keys are normalised
	// over it and default windows sized by it. Empty (or the zero value)
	// means the extent of the sample's boxes.
	Extent spatial.Bound
	// Normalize is the normalisation the rewrite will use.
	Normalize Normalization
	// Windows are the window sets to choose for; nil means AutoAreas (see
	// DefaultWindowSets). Each set weighs the same, whatever its size.
	Windows []WindowSet
	// Candidates are curve names (CurveNames) to weigh; nil means
	// AutoCandidates.
	Candidates []string
}

// Estimate is one candidate layout's predicted files planned.
type Estimate struct {
	Curve string `json:"curve"`
	// Planned is the mean files planned per window, one per window set.
	Planned []float64 `json:"files_planned"`
	// Score is the geometric mean of Planned (each at least 0.001): the
	// figure Choose minimises, so that every window set weighs the same
	// relative to its own size.
	Score float64 `json:"score"`
}

// Choice is the layout Choose picked and the evidence for it.
type Choice struct {
	// Curve is the chosen curve name (CurveNames) and Order its order.
	Curve string `json:"curve"`
	Order Order  `json:"-"`
	// Files and Sample are the file count and sample size estimated for.
	Files  int `json:"files"`
	Sample int `json:"sample_rows"`
	// Windows names the window sets, in the order of Estimate.Planned.
	Windows []string `json:"windows"`
	// Estimates holds every candidate's figures, in candidate order.
	Estimates []Estimate `json:"estimates"`
}

// Choose picks, for rows like sample (a sample of a table's or
// partition's row boxes) written into cfg.Files files, the candidate
// layout that plans the fewest files for the window sets: it lays the
// sample out with each candidate (FileBounds: the sample ordered and cut
// into cfg.Files equal runs) and counts the files each window meets. The
// lowest Score wins; ties go to the earlier candidate. Choose is
// deterministic: the same arguments give the same Choice.
//
// A sample much smaller than the table shrinks each file's box (its
// extreme rows are missing), so absolute figures run low; what matters
// is how candidates rank. Give at least a few dozen sample rows per file.
func Choose(sample []spatial.Bound, cfg ChooseConfig) (Choice, error) {
	if cfg.Files < 1 {
		return Choice{}, fmt.Errorf("cluster: choose layout: %d files, want at least 1", cfg.Files)
	}
	if cfg.Extent == (spatial.Bound{}) || cfg.Extent.IsEmpty() {
		cfg.Extent = spatial.EmptyBound()
		for _, b := range sample {
			cfg.Extent = cfg.Extent.Extend(b)
		}
	}
	sets := cfg.Windows
	if sets == nil {
		var err error
		if sets, err = DefaultWindowSets(sample, cfg.Extent); err != nil {
			return Choice{}, fmt.Errorf("cluster: choose layout: %w", err)
		}
	}
	names := cfg.Candidates
	if names == nil {
		names = AutoCandidates()
	}
	ch := Choice{Files: cfg.Files, Sample: len(sample)}
	for _, s := range sets {
		ch.Windows = append(ch.Windows, s.Name)
	}
	best := -1
	opts := SortOptions{Extent: cfg.Extent, Normalize: cfg.Normalize, Windows: cfg.Windows}
	for i, name := range names {
		o, err := CurveOrder(name)
		if err != nil {
			return Choice{}, fmt.Errorf("cluster: choose layout: %w", err)
		}
		est, err := estimate(sample, o, opts, cfg.Files, sets)
		if err != nil {
			return Choice{}, fmt.Errorf("cluster: choose layout: %s: %w", name, err)
		}
		est.Curve = name
		ch.Estimates = append(ch.Estimates, est)
		if best < 0 || est.Score < ch.Estimates[best].Score {
			best, ch.Curve, ch.Order = i, name, o
		}
	}
	return ch, nil
}

// estimate lays the sample out once with o and counts files planned for
// every window set.
func estimate(sample []spatial.Bound, o Order, opts SortOptions, files int, sets []WindowSet) (Estimate, error) {
	fb, err := FileBounds(sample, o, opts, files)
	if err != nil {
		return Estimate{}, err
	}
	est := Estimate{Planned: make([]float64, len(sets))}
	logSum := 0.0
	for i, s := range sets {
		counts := CountPlanned(fb, s.Windows)
		sum := 0
		for _, c := range counts {
			sum += c
		}
		if len(counts) > 0 {
			est.Planned[i] = float64(sum) / float64(len(counts))
		}
		logSum += math.Log(max(est.Planned[i], 0.001))
	}
	est.Score = math.Exp(logSum / float64(max(1, len(sets))))
	return est, nil
}

// DefaultWindowSets draws the window sets Choose uses when given none:
// AutoWindows data-placed windows (DataWindows, seed AutoSeed) for each
// area of AutoAreas, named by the area as a percentage ("0.1%", "1%").
func DefaultWindowSets(sample []spatial.Bound, extent spatial.Bound) ([]WindowSet, error) {
	var sets []WindowSet
	for _, a := range AutoAreas {
		ws, err := DataWindows(sample, extent, a, AutoWindows, AutoSeed)
		if err != nil {
			return nil, err
		}
		sets = append(sets, WindowSet{Name: AreaName(a), Windows: ws})
	}
	return sets, nil
}

// AreaName names a window area fraction as a percentage: 0.001 is "0.1%".
func AreaName(area float64) string {
	return strconv.FormatFloat(area*100, 'g', -1, 64) + "%"
}
