// Command geocompact keeps spatial Apache Iceberg tables fast: it compacts
// small files into target-sized ones clustered by a linear, Z-order or
// Hilbert key over bounding boxes, validates geometry, expires snapshots and
// removes orphan files, and measures how well a layout prunes.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], newIOStreams(os.Stdin, os.Stdout, os.Stderr))
	stop()
	os.Exit(code)
}
