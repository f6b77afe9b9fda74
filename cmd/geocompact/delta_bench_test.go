package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/geocompact/geocompact/bench"
)

// envAsWindows makes the test binary write the query windows of a
// generated table, ROWS|COMMITS|SEED|OUT: bench's data-placed windows of
// bench.DefaultWindowArea over the rows bench.Generate writes (clustered),
// computed in a child so that the benchmark's own process stays small.
const envAsWindows = "GEOCOMPACT_TEST_AS_WINDOWS"

func writeBenchWindows(spec string) {
	parts := strings.Split(spec, "|")
	rows, _ := strconv.ParseInt(parts[0], 10, 64)
	commits, _ := strconv.Atoi(parts[1])
	seed, _ := strconv.ParseUint(parts[2], 10, 64)
	cfg := bench.GenerateConfig{Rows: rows, Commits: commits, Distribution: bench.Clustered, Seed: seed}
	err := func() error {
		rb, err := bench.RowBounds(cfg)
		if err != nil {
			return err
		}
		extent := rb[0]
		for _, b := range rb {
			extent = extent.Extend(b)
		}
		ws, err := bench.GenerateWindows(bench.WindowConfig{Seed: seed}, extent, rb)
		if err != nil {
			return err
		}
		b, err := json.Marshal(ws)
		if err != nil {
			return err
		}
		return os.WriteFile(parts[3], b, 0o644)
	}()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// BenchmarkDeltaOptimize rewrites the same rows held as an Iceberg table
// and as a Delta table (ingest --delta of the Iceberg table's data files,
// one Delta file each) with the same engine, each way in a child process
// of its own on the warehouse restored at its own path (benchWarehouse),
// and reports wall time, peak resident memory and the files a query window plans before and after, by each format's
// own file statistics (metrics --windows: the mean over 100 data-placed
// windows of 1% of the extent). Files target 1 MiB.
//
//	GEOCOMPACT_BENCH_ROWS=1500000 go test ./cmd/geocompact -run '^$' -bench BenchmarkDeltaOptimize -benchtime 1x
func BenchmarkDeltaOptimize(b *testing.B) {
	rows := benchRows()
	w := newBenchWarehouse(b, rows, benchCommits)
	lake := filepath.Join(w.path, "lake")
	windows := filepath.Join(b.TempDir(), "windows.json")
	ingest := childCLI(b.Context(), "--warehouse", w.path, "ingest", "--delta", lake, "--create", filepath.Join(w.path, "bench.db", "pings", "data"))
	if out, err := ingest.CombinedOutput(); err != nil {
		b.Fatalf("ingest: %v\n%s", err, out)
	}
	w.save(b)
	win := exec.CommandContext(b.Context(), os.Args[0])
	win.Env = append(os.Environ(), envAsWindows+"="+fmt.Sprintf("%d|%d|%d|%s", rows, benchCommits, benchSeed, windows))
	if out, err := win.CombinedOutput(); err != nil {
		b.Fatalf("windows: %v\n%s", err, out)
	}
	for _, format := range []string{"iceberg", "delta"} {
		for _, layout := range [][]string{{"binpack", "--strategy", "binpack"}, {"hilbert", "--curve", "hilbert"}} {
			b.Run(format+"-"+layout[0], func(b *testing.B) {
				benchOptimizeWay(b, w, format, windows, layout[1:])
			})
		}
	}
}

// benchOptimizeWay runs one rewrite of the benchmark's table in format
// (iceberg or delta) with layout flags and reports its figures.
func benchOptimizeWay(b *testing.B, w benchWarehouse, format, windows string, layout []string) {
	var wall time.Duration
	var peak int64
	var before, after, files float64
	for b.Loop() {
		b.StopTimer()
		wh := w.fresh(b)
		target := []string{"--table", benchTable}
		if format == "delta" {
			target = []string{"--delta", filepath.Join(wh, "lake")}
		}
		before, _ = plannedPerWindow(b, wh, target, windows)
		args := append(append([]string{"--warehouse", wh, "rewrite"}, target...), "--option", "rewrite-all=true",
			"--option", "target-file-size-bytes=1048576", "--allow-layout-change")
		cmd := childCLI(b.Context(), append(args, layout...)...)
		b.StartTimer()
		start := time.Now()
		out, err := cmd.CombinedOutput()
		wall += time.Since(start)
		b.StopTimer()
		if err != nil {
			b.Fatalf("rewrite: %v\n%s", err, out)
		}
		peak = max(peak, cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss<<10)
		after, files = plannedPerWindow(b, wh, target, windows)
		b.StartTimer()
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-MiB")
	b.ReportMetric(wall.Seconds()/float64(b.N), "s/rewrite")
	b.ReportMetric(before, "planned-before")
	b.ReportMetric(after, "planned-after")
	b.ReportMetric(files, "files-after")
}

// plannedPerWindow is the mean number of files a window of the windows
// file plans in the (unpartitioned) table target, by metrics --windows,
// and the table's file count.
func plannedPerWindow(b *testing.B, wh string, target []string, windows string) (planned, files float64) {
	b.Helper()
	args := append(append([]string{"--warehouse", wh, "--json", "metrics"}, target...), "--windows", windows)
	out, err := childCLI(b.Context(), args...).Output()
	if err != nil {
		b.Fatalf("metrics: %v\n%s", err, out)
	}
	var m struct {
		Files      int `json:"file_count"`
		Partitions []struct {
			Layout struct {
				MeanFilesPlanned *float64 `json:"mean_files_planned"`
			} `json:"layout"`
		} `json:"partitions"`
	}
	if err := json.Unmarshal(out, &m); err != nil || len(m.Partitions) != 1 || m.Partitions[0].Layout.MeanFilesPlanned == nil {
		b.Fatalf("metrics: %v, output %s", err, out)
	}
	return *m.Partitions[0].Layout.MeanFilesPlanned, float64(m.Files)
}
