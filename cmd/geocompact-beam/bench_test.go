package main

import (
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/internal/testing/enginetest"
	"github.com/geocompact/geocompact/table/catalogs"
)

// BenchmarkShuffledGroup rewrites one group larger than its memory budget
// (GEOCOMPACT_BENCH_ROWS clustered points, 500,000 by default, in 100
// files; a 64 MiB budget) by the local engine's spilled sort and by
// geocompact-beam on Prism in this process, each on a fresh warehouse,
// and reports the CPU seconds of each rewrite beside its time:
//
//	cd cmd/geocompact-beam && for i in 1 2 3; do go test -run '^$' -bench BenchmarkShuffledGroup -benchtime 1x; done
//
// (-count 3 would run one engine three times, then the other.) Peak RSS
// needs a process per engine: -bench 'BenchmarkShuffledGroup/local' under
// /usr/bin/time, then prism.
func BenchmarkShuffledGroup(b *testing.B) {
	rows := 500000
	if v := os.Getenv("GEOCOMPACT_BENCH_ROWS"); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(b, err)
		rows = n
	}
	cfg := engine.Request{Curve: "hilbert", Options: map[string]string{"rewrite-all": "true",
		"target-file-size-bytes": "8388608", "max-group-memory-bytes": "67108864"}}
	for _, name := range []string{"local", "prism"} {
		b.Run(name, func(b *testing.B) {
			var cpu time.Duration
			var shuffled int64
			for range b.N {
				b.StopTimer()
				spec := catalogs.Spec{Warehouse: b.TempDir()}
				cat, err := catalogs.Open(b.Context(), spec)
				require.NoError(b, err)
				_, err = bench.Generate(b.Context(), cat, bench.GenerateConfig{Table: "geo.t", Seed: 3, Rows: int64(rows), Commits: 100, Distribution: bench.Clustered})
				require.NoError(b, err)
				start := cpuTime(b)
				b.StartTimer()
				var res *engine.Result
				if name == "local" {
					res, err = enginetest.Rewrite(b.Context(), cat, "geo.t", cfg)
				} else {
					var r *Result
					r, err = rewrite(b.Context(), spec, "geo.t", cfg, "prism")
					if r != nil {
						res, shuffled = r.Result, shuffled+r.ShuffleBytes
					}
				}
				b.StopTimer()
				cpu += cpuTime(b) - start
				require.NoError(b, err)
				require.True(b, res.Verified)
			}
			b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
			b.ReportMetric(float64(shuffled)/float64(b.N), "shuffle-B/op")
		})
	}
}

// cpuTime is the user and system CPU time of this process so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	require.NoError(b, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
