package bench

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/cluster"
	"github.com/geocompact/geocompact/spatial"
)

// layoutEnv reads a positive integer from the environment, else def.
func layoutEnv(t testing.TB, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	require.NoError(t, err, name)
	require.Positive(t, n, name)
	return n
}

// strideSample takes m rows evenly spaced through rows (arrival order, so
// an unbiased sample of generated rows).
func strideSample(rows []spatial.Bound, m int) []spatial.Bound {
	if m >= len(rows) {
		return rows
	}
	out := make([]spatial.Bound, m)
	for i := range out {
		out[i] = rows[i*len(rows)/m]
	}
	return out
}

// fixedCurves are the curves the layouts beyond curves are measured
// against.
var fixedCurves = []string{"linear", "zorder", "hilbert"}

func meanInts(c []int) float64 {
	s := 0
	for _, v := range c {
		s += v
	}
	return float64(s) / float64(len(c))
}

// meanLowerBound is the mean over windows of the fewest files of at most
// an even share of rows (rows/files, rounded up) that could hold every row
// a window meets (lowerBound).
func meanLowerBound(rows, windows []spatial.Bound, files int) float64 {
	share := int64(math.Ceil(float64(len(rows)) / float64(files)))
	var total int64
	for _, w := range windows {
		var n int64
		for _, r := range rows {
			if r.Intersects(w) {
				n++
			}
		}
		total += lowerBound(n, share)
	}
	return float64(total) / float64(len(windows))
}

// layoutDistributions are the data sets the layout goals hold on:
// generated hotspots, pings around real places and a fleet's pings
// between them.
var layoutDistributions = []Distribution{Clustered, Places, Tracks}

// dataSets draws 400 data-placed windows (seed 7) of each of auto's areas
// over rows, and returns them with the rows' extent.
func dataSets(t testing.TB, rows []spatial.Bound) ([]cluster.WindowSet, spatial.Bound) {
	t.Helper()
	extent := spatial.EmptyBound()
	for _, r := range rows {
		extent = extent.Extend(r)
	}
	var sets []cluster.WindowSet
	for _, a := range cluster.AutoAreas {
		ws, err := cluster.DataWindows(rows, extent, a, 400, 7)
		require.NoError(t, err)
		sets = append(sets, cluster.WindowSet{Name: cluster.AreaName(a), Windows: ws})
	}
	return sets, extent
}

// plannedByLayout cuts rows into files by each of auto's candidates and
// returns, by candidate, the mean files planned per window of each set.
func plannedByLayout(t testing.TB, rows []spatial.Bound, extent spatial.Bound, files int, sets []cluster.WindowSet) map[string][]float64 {
	t.Helper()
	out := map[string][]float64{}
	for _, name := range cluster.AutoCandidates() {
		o, err := cluster.CurveOrder(name)
		require.NoError(t, err)
		fb, err := cluster.FileBounds(rows, o, cluster.SortOptions{Extent: extent}, files)
		require.NoError(t, err)
		for _, s := range sets {
			out[name] = append(out[name], meanInts(cluster.CountPlanned(fb, s.Windows)))
		}
	}
	return out
}

// bestCurve is the fewest files planned on set i by a fixed curve.
func bestCurve(planned map[string][]float64, i int) float64 {
	best := 0.0
	for _, name := range fixedCurves {
		if v := planned[name][i]; best == 0 || v < best {
			best = v
		}
	}
	return best
}

// TestLayoutEstimates measures, on generated clustered points, on pings
// around real places and on a fleet's pings between them, the files
// planned that the sample-based estimate predicts for each layout against
// the figure for cutting all the rows, the lower bound (the fewest files
// of an even share that hold a window's rows), and what Choose picks
// against the best fixed curve.
// It prints markdown tables (docs/layouts.md) and fails when an estimate
// is more than 10% off, when auto's pick plans more than 5% more files
// than the best of linear, zorder and hilbert, or when at 50 files and 1%
// windows it does not plan at least 10% fewer. Run with
//
//	GEOCOMPACT_LONG=1 go test ./bench -run TestLayoutEstimates -v
//
// GEOCOMPACT_LAYOUT_ROWS and GEOCOMPACT_LAYOUT_SAMPLE override the row
// count (1,000,000) and the sample size (65,536).
func TestLayoutEstimates(t *testing.T) {
	t.Parallel()
	if os.Getenv("GEOCOMPACT_LONG") == "" {
		t.Skip("a measurement: set GEOCOMPACT_LONG=1")
	}
	for _, d := range layoutDistributions {
		t.Run(string(d), func(t *testing.T) { layoutEstimates(t, d) })
	}
}

func layoutEstimates(t *testing.T, dist Distribution) {
	n := layoutEnv(t, "GEOCOMPACT_LAYOUT_ROWS", 1_000_000)
	m := layoutEnv(t, "GEOCOMPACT_LAYOUT_SAMPLE", 1<<16)
	rows, err := RowBounds(GenerateConfig{Rows: int64(n), Distribution: dist, Seed: 1})
	require.NoError(t, err)
	sample := strideSample(rows, m)
	sets, extent := dataSets(t, rows)
	var est, pick strings.Builder
	fmt.Fprintf(&est, "| files | window | lower bound | %s |\n|---|---|---|%s\n", strings.Join(cluster.AutoCandidates(), " | "), strings.Repeat("---|", len(cluster.AutoCandidates())))
	fmt.Fprintf(&pick, "| files | auto picks | window | lower bound | auto (true) | best of linear/zorder/hilbert | auto vs best curve | auto / lower bound | best curve / lower bound |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, files := range []int{10, 50, 500} {
		truth := plannedByLayout(t, rows, extent, files, sets)
		pred := plannedByLayout(t, sample, extent, files, sets)
		ch, err := cluster.Choose(sample, cluster.ChooseConfig{Files: files, Extent: extent})
		require.NoError(t, err)
		for i, s := range sets {
			lb := meanLowerBound(rows, s.Windows, files)
			fmt.Fprintf(&est, "| %d | %s | %.2f |", files, s.Name, lb)
			for _, name := range cluster.AutoCandidates() {
				fmt.Fprintf(&est, " %.2f (est. %.2f) |", truth[name][i], pred[name][i])
				assert.InEpsilon(t, truth[name][i], pred[name][i], 0.1, "%d files, %s windows, %s: estimate", files, s.Name, name)
			}
			est.WriteString("\n")
			best := bestCurve(truth, i)
			got := truth[ch.Curve][i]
			fmt.Fprintf(&pick, "| %d | %s | %s | %.2f | %.2f | %.2f | %+.1f%% | %.2f | %.2f |\n", files, ch.Curve, s.Name, lb, got, best, 100*(got/best-1), got/lb, best/lb)
			assert.LessOrEqual(t, got, 1.05*best, "%d files, %s windows: auto's %s is more than 5%% worse than the best curve", files, s.Name, ch.Curve)
			if files == 50 && s.Name == "1%" {
				assert.LessOrEqual(t, got, 0.9*best, "50 files, 1%% windows: auto's %s is not 10%% better than the best curve", ch.Curve)
			}
		}
		t.Logf("%d files: auto estimates %+v", files, ch.Estimates)
	}
	t.Logf("%s: %d rows, sample %d, %d windows per set\n\n%s\n%s", dist, n, m, len(sets[0].Windows), est.String(), pick.String())
}
