package cluster

import (
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// cpuClock reports the CPU time the benchmark's own thread spends per op
// and per row ("cpu-ns/op", "cpu-ns/row"), beside the wall-clock ns/op.
// On a shared machine the wall clock counts time spent waiting for a core;
// the thread's CPU time does not. Work done on other threads (the garbage
// collector's background workers) is not counted.
type cpuClock struct {
	b            *testing.B
	rows         int
	total, start int64
}

// cpuMeter starts a cpuClock; defer its report method.
func cpuMeter(b *testing.B, rows int) *cpuClock {
	b.Helper()
	runtime.LockOSThread()
	return &cpuClock{b: b, rows: rows, start: threadCPU()}
}

// pause and resume exclude setup inside the loop, like b.StopTimer.
func (c *cpuClock) pause()  { c.total += threadCPU() - c.start }
func (c *cpuClock) resume() { c.start = threadCPU() }

func (c *cpuClock) report() {
	c.pause()
	runtime.UnlockOSThread()
	perOp := float64(c.total) / float64(c.b.N)
	c.b.ReportMetric(perOp, "cpu-ns/op")
	if c.rows > 1 {
		c.b.ReportMetric(perOp/float64(c.rows), "cpu-ns/row")
	}
}

func threadCPU() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return ts.Nano()
}
