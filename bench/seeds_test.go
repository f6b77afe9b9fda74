package bench

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/cluster"
)

// TestLayoutSeeds measures auto's pick against the best fixed curve on
// other tables than TestLayoutEstimates' seed: each data set at seeds 1 to
// GEOCOMPACT_SEEDS (6), 400,000 rows cut into 64 files, 400 data-placed
// windows of 1% and of 0.1% of the extent. It prints a markdown table
// (docs/layouts.md) and fails when auto's pick plans more than 5% more
// files than the best of linear, zorder and hilbert on any of them. Run
// with
//
//	GEOCOMPACT_LONG=1 go test ./bench -run TestLayoutSeeds -v
func TestLayoutSeeds(t *testing.T) {
	t.Parallel()
	if os.Getenv("GEOCOMPACT_LONG") == "" {
		t.Skip("a measurement: set GEOCOMPACT_LONG=1")
	}
	seeds := layoutEnv(t, "GEOCOMPACT_SEEDS", 6)
	const rows, files = 400_000, 64
	var out strings.Builder
	out.WriteString("| data | seed | window | linear | zorder | hilbert | str | kd | auto picks | auto vs best of linear/zorder/hilbert |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for _, dist := range layoutDistributions {
		for seed := 1; seed <= seeds; seed++ {
			t.Run(fmt.Sprintf("%s/%d", dist, seed), func(t *testing.T) {
				out.WriteString(layoutSeed(t, dist, uint64(seed), rows, files))
			})
		}
	}
	t.Logf("%d rows, %d files, 400 windows per area\n\n%s", rows, files, out.String())
}

// layoutSeed measures one table and returns its lines of the table.
func layoutSeed(t *testing.T, dist Distribution, seed uint64, n, files int) string {
	rows, err := RowBounds(GenerateConfig{Rows: int64(n), Distribution: dist, Seed: seed})
	require.NoError(t, err)
	sets, extent := dataSets(t, rows)
	planned := plannedByLayout(t, rows, extent, files, sets)
	ch, err := cluster.Choose(strideSample(rows, 1<<16), cluster.ChooseConfig{Files: files, Extent: extent})
	require.NoError(t, err)
	var out strings.Builder
	for i, s := range sets {
		fmt.Fprintf(&out, "| %s | %d | %s |", dist, seed, s.Name)
		for _, name := range cluster.AutoCandidates() {
			fmt.Fprintf(&out, " %.2f |", planned[name][i])
		}
		best, got := bestCurve(planned, i), planned[ch.Curve][i]
		fmt.Fprintf(&out, " %s | %.3f× |\n", ch.Curve, got/best)
		assert.LessOrEqual(t, got, 1.05*best, "%s windows: auto's %s is more than 5%% worse than the best curve", s.Name, ch.Curve)
	}
	return out.String()
}
