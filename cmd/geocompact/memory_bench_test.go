package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/geocompact/geocompact/internal/testing/testenv"
	"github.com/geocompact/geocompact/table/catalogs"
)

// envAsIcebergBinpack makes the test binary compact WAREHOUSE|TABLE|TARGET
// with iceberg-go's own compaction, so its peak memory is measured in a
// process of its own like geocompact's.
const envAsIcebergBinpack = "GEOCOMPACT_TEST_AS_ICEBERG_BINPACK"

func runIcebergBinpack(spec string) {
	parts := strings.Split(spec, "|")
	target, _ := strconv.ParseInt(parts[2], 10, 64)
	ctx := context.Background()
	cat, err := catalogs.Open(ctx, catalogs.Spec{Warehouse: parts[0]})
	if err == nil {
		tbl, lerr := catalogs.LoadTable(ctx, cat, parts[1])
		err = lerr
		if err == nil {
			err = testenv.IcebergBinpack(ctx, tbl, target)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// BenchmarkRewriteMemory runs each way of rewriting the same table in a
// child process of its own, each on the generated warehouse restored at
// its own path (benchWarehouse), and reports its wall time and peak
// resident memory (the child's maxrss): iceberg-go's
// binpack, our binpack and our Hilbert sort at default settings, and the
// Hilbert sort with a 256 MiB budget (spilled when the group exceeds it)
// and with a budget it fits in (in memory). Files target 1 MiB.
//
// Rows default to 300,000 clustered points in 300 files;
// GEOCOMPACT_BENCH_ROWS sets them (1500000 for the documented run) and
// GEOCOMPACT_BENCH_WAYS picks ways by name (comma-separated).
//
//	GEOCOMPACT_BENCH_ROWS=1500000 go test ./cmd/geocompact -run '^$' -bench BenchmarkRewriteMemory -benchtime 1x -count 3
//
// The benchmarks' generated table: clustered points in benchCommits
// commits, reproducible by benchSeed.
const (
	benchTable   = "bench.pings"
	benchCommits = 300
	benchSeed    = 3
)

// benchRows is the benchmarks' row count: GEOCOMPACT_BENCH_ROWS, else
// 300,000.
func benchRows() int64 {
	if v, err := strconv.ParseInt(os.Getenv("GEOCOMPACT_BENCH_ROWS"), 10, 64); err == nil && v > 0 {
		return v
	}
	return 300_000
}

func BenchmarkRewriteMemory(b *testing.B) {
	rows := benchRows()
	target := int64(1 << 20)
	if v, err := strconv.ParseInt(os.Getenv("GEOCOMPACT_BENCH_TARGET"), 10, 64); err == nil && v > 0 {
		target = v
	}
	w := newBenchWarehouse(b, rows, benchCommits)
	const name = benchTable
	parquet := parquetBytes(w.saved)
	rw := func(extra ...string) []string {
		return append([]string{"rewrite", "--table", name, "--option", "rewrite-all=true",
			"--option", fmt.Sprintf("target-file-size-bytes=%d", target)}, extra...)
	}
	ways := []struct {
		name string
		args []string
	}{
		{"iceberg-go-binpack", nil},
		{"binpack", rw()},
		{"hilbert", rw("--curve", "hilbert")},
		{"hilbert-in-memory", rw("--curve", "hilbert", "--option", "max-group-memory-bytes=17179869184")},
		{"hilbert-budget-256MiB", rw("--curve", "hilbert", "--option", "max-group-memory-bytes=268435456")},
	}
	pick := os.Getenv("GEOCOMPACT_BENCH_WAYS")
	for _, way := range ways {
		if pick != "" && !strings.Contains(","+pick+",", ","+way.name+",") {
			continue
		}
		b.Run(way.name, func(b *testing.B) {
			var wall time.Duration
			var peak int64
			for b.Loop() {
				b.StopTimer()
				wh := w.fresh(b)
				var cmd *exec.Cmd
				if way.args == nil {
					cmd = exec.CommandContext(b.Context(), os.Args[0])
					cmd.Env = append(os.Environ(), envAsIcebergBinpack+"="+fmt.Sprintf("%s|%s|%d", wh, name, target))
				} else {
					cmd = childCLI(b.Context(), append([]string{"--warehouse", wh}, way.args...)...)
				}
				b.StartTimer()
				start := time.Now()
				out, err := cmd.CombinedOutput()
				wall += time.Since(start)
				if err != nil {
					b.Fatalf("%s: %v\n%s", way.name, err, out)
				}
				peak = max(peak, cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss<<10)
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-MiB")
			b.ReportMetric(wall.Seconds()/float64(b.N), "s/rewrite")
			b.ReportMetric(float64(parquet)/(1<<20), "parquet-MiB")
		})
	}
}
