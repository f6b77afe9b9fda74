package engine_test

import (
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/apache/iceberg-go/catalog"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/internal/testing/enginetest"
	"github.com/geocompact/geocompact/internal/testing/testenv"
	"github.com/geocompact/geocompact/table/catalogs"
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
			cat, err := catalogs.Open(b.Context(), catalogs.Spec{Warehouse: b.TempDir()})
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
					if _, err := enginetest.Rewrite(b.Context(), cat, "geo.t", c); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(rows), "rows")
		})
	}
}

// icebergBinpack compacts geo.t with iceberg-go's own compaction.
func icebergBinpack(b *testing.B, cat catalog.Catalog, target int64) {
	b.Helper()
	tbl, err := catalogs.LoadTable(b.Context(), cat, "geo.t")
	if err != nil {
		b.Fatal(err)
	}
	if err := testenv.IcebergBinpack(b.Context(), tbl, target); err != nil {
		b.Fatal(err)
	}
}
