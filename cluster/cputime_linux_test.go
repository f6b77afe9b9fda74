package cluster

import (
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// cpuMeter reports the CPU time the benchmark's own thread spends per op
// and per row ("cpu-ns/op", "cpu-ns/row"), beside the wall-clock ns/op.
// On a shared machine the wall clock counts time spent waiting for a core;
// the thread's CPU time does not. Work done on other threads (the garbage
// collector's background workers) is not counted.
func cpuMeter(b *testing.B, rows int) func() {
	b.Helper()
	runtime.LockOSThread()
	start := threadCPU()
	return func() {
		cpu := threadCPU() - start
		runtime.UnlockOSThread()
		b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
		if rows > 1 {
			b.ReportMetric(float64(cpu)/float64(b.N)/float64(rows), "cpu-ns/row")
		}
	}
}

func threadCPU() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return ts.Nano()
}
