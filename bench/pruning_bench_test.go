package bench

import (
	"strconv"
	"testing"

	"github.com/geocompact/geocompact/engine"
)

// BenchmarkPruning writes each layout of a small clustered points table
// (20,000 rows arriving in 40 commits, cut into about 16 files) and
// reports the files scan planning opens per 1% window, the ratio to the
// lower bound, and the overlap depth. Time per op is the cost of writing
// and measuring one layout.
//
//	go test -run '^$' -bench Pruning -benchtime 1x ./bench
func BenchmarkPruning(b *testing.B) {
	cat := newCatalog(b)
	gen, err := Generate(b.Context(), cat, GenerateConfig{Table: "b.pings", Rows: 20000, Commits: 40, Distribution: Clustered, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	target := gen.Bytes / 16
	for _, l := range AllLayouts {
		b.Run("layout="+string(l), func(b *testing.B) {
			cfg := Config{
				Table:        "b.pings",
				Layouts:      []Layout{l},
				WindowConfig: WindowConfig{Count: 50, Area: 0.01, Placement: PlaceData, Seed: 1},
				Options:      map[string]string{engine.OptTargetFileSize: strconv.FormatInt(target, 10)},
			}
			var lr LayoutReport
			for b.Loop() {
				rep, err := Run(b.Context(), cat, cfg)
				if err != nil {
					b.Fatal(err)
				}
				lr = rep.Layouts[0]
			}
			b.ReportMetric(lr.MeanFilesPlanned, "files-planned/op")
			b.ReportMetric(float64(lr.Files), "files")
			if lr.RatioToLowerBound != nil {
				b.ReportMetric(*lr.RatioToLowerBound, "x-lower-bound")
			}
			b.ReportMetric(lr.MeanOverlapDepth, "overlap-depth")
		})
	}
}
