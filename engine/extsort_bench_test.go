package engine_test

import (
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/internal/testing/enginetest"
	"github.com/geocompact/geocompact/table/catalogs"
)

// BenchmarkSpilledSort rewrites one generated group (clustered points in
// 300 files, 1 MiB target files, every file rewritten) by Hilbert, sorted
// in memory and spilled at several budgets, so that a CPU profile of one
// budget shows where a spilled sort's time goes. Rows default to 300,000
// (GEOCOMPACT_BENCH_ROWS sets them); GEOCOMPACT_BENCH_BUDGETS picks
// budgets in MiB (comma-separated sub-benchmark names, e.g. 64MiB).
//
//	go test ./engine -run '^$' -bench 'BenchmarkSpilledSort/64MiB' -benchtime 1x -cpuprofile /tmp/spill64.prof
func BenchmarkSpilledSort(b *testing.B) {
	rows := int64(300_000)
	if v, err := strconv.ParseInt(os.Getenv("GEOCOMPACT_BENCH_ROWS"), 10, 64); err == nil && v > 0 {
		rows = v
	}
	cfg := bench.GenerateConfig{Table: "geo.t", Rows: rows, Commits: 300, Distribution: bench.Clustered, Seed: 3, Replace: true}
	for _, budget := range []int64{16 << 10, 64, 128, 256, 512} {
		name := fmt.Sprintf("%dMiB", budget)
		if budget == 16<<10 {
			name = "in-memory"
		}
		b.Run(name, func(b *testing.B) {
			cat, err := catalogs.Open(b.Context(), catalogs.Spec{Warehouse: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				b.StopTimer()
				if _, err := bench.Generate(b.Context(), cat, cfg); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				req := engine.Request{Curve: "hilbert", Options: map[string]string{
					engine.OptTargetFileSize: strconv.Itoa(1 << 20), engine.OptRewriteAll: "true",
					engine.OptMaxGroupMemory: strconv.FormatInt(budget<<20, 10)}}
				res, err := enginetest.Rewrite(b.Context(), cat, "geo.t", req)
				if err != nil {
					b.Fatal(err)
				}
				if sp := res.Plan.Groups[0].Sort; sp.Spill != (name != "in-memory") {
					b.Fatalf("%s: spill %v", name, sp.Spill)
				}
			}
		})
	}
}
