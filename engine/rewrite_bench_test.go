package engine_test

import (
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/compaction"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/engine"
)

// BenchmarkRewrite rewrites the same generated table (clustered points in
// 300 arrival-order files) three ways: our binpack, our hilbert sort, and
// iceberg-go's own binpack compaction (compaction.Analyze +
// RewriteDataFiles), all into files of the same target size. Each
// iteration rewrites a fresh copy; generating it is not timed. Rows default
// to 300,000; set GEOCOMPACT_BENCH_ROWS=2000000 for the documented run.
//
//	go test ./engine -run '^$' -bench BenchmarkRewrite -benchtime 3x
func BenchmarkRewrite(b *testing.B) {
	rows := int64(300_000)
	if v, err := strconv.ParseInt(os.Getenv("GEOCOMPACT_BENCH_ROWS"), 10, 64); err == nil && v > 0 {
		rows = v
	}
	cfg := bench.GenerateConfig{Table: "geo.t", Rows: rows, Commits: 300, Distribution: bench.Clustered, Seed: 3, Replace: true}
	for _, way := range []string{"binpack", "hilbert", "iceberg-go-binpack"} {
		b.Run(way, func(b *testing.B) {
			cat, err := engine.OpenCatalog(b.Context(), engine.CatalogSpec{Warehouse: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				b.StopTimer()
				gen, err := bench.Generate(b.Context(), cat, cfg)
				if err != nil {
					b.Fatal(err)
				}
				target := gen.Bytes / 64
				b.StartTimer()
				switch way {
				case "iceberg-go-binpack":
					icebergBinpack(b, cat, target)
				default:
					c := engine.Request{Options: map[string]string{engine.OptTargetFileSize: fmt.Sprint(target), engine.OptRewriteAll: "true"}}
					if way == "hilbert" {
						c.Curve = "hilbert"
					}
					if _, err := engine.Rewrite(b.Context(), cat, "geo.t", c); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(rows), "rows")
		})
	}
}

// icebergBinpack compacts geo.t the way iceberg-go's own CLI does: its
// planner, then RewriteDataFiles, with the same target size.
func icebergBinpack(b *testing.B, cat catalog.Catalog, target int64) {
	b.Helper()
	tbl, err := engine.LoadTable(b.Context(), cat, "geo.t")
	if err != nil {
		b.Fatal(err)
	}
	cfg := compaction.DefaultConfig()
	cfg.TargetFileSizeBytes, cfg.MinFileSizeBytes, cfg.MaxFileSizeBytes = target, target*3/4, target*9/5
	cfg.MinInputFiles = 1 // rewrite every file, as rewrite-all does for ours
	plan, err := compaction.Analyze(b.Context(), tbl, cfg)
	if err != nil {
		b.Fatal(err)
	}
	groups := make([]table.CompactionTaskGroup, len(plan.Groups))
	for i, g := range plan.Groups {
		groups[i] = table.CompactionTaskGroup{PartitionKey: g.PartitionKey, Tasks: g.Tasks, TotalSizeBytes: g.TotalSizeBytes}
	}
	opts := table.RewriteDataFilesOptions{GroupOptions: []table.CompactionGroupOption{table.WithCompactionTargetFileSize(target)}}
	res, err := tbl.RewriteDataFiles(b.Context(), groups, opts)
	if err != nil {
		b.Fatal(err)
	}
	if n := len(plan.Groups); n == 0 || plan.SkippedFiles > 0 {
		b.Fatalf("iceberg-go planned %d groups and skipped %d files; the comparison needs every file rewritten", n, plan.SkippedFiles)
	}
	_ = res
}
