// Command geocompact keeps spatial Apache Iceberg tables fast: it compacts
// small files into target-sized ones clustered by a linear, Z-order or
// Hilbert key over bounding boxes, validates geometry, expires snapshots and
// removes orphan files, and measures how well a layout prunes.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	stopProfile := cpuProfile(os.Getenv("GEOCOMPACT_CPUPROFILE"))
	stopHeap := heapProfile(os.Getenv("GEOCOMPACT_MEMPROFILE"))
	code := run(ctx, os.Args[1:], newIOStreams(os.Stdin, os.Stdout, os.Stderr))
	stop()
	stopHeap()
	stopProfile()
	os.Exit(code)
}

// cpuProfile starts a CPU profile into the file at path (none when path is
// empty, as when GEOCOMPACT_CPUPROFILE is unset) and returns what stops it.
func cpuProfile(path string) func() {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "geocompact: GEOCOMPACT_CPUPROFILE: %v\n", err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
