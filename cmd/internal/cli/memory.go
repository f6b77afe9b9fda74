package cli

import (
	"os"
	"runtime"
	"runtime/debug"

	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/engine/spill"
)

// LimitMemory sets the Go runtime's soft memory limit to the memory
// budget of req (its max-group-memory-bytes as the request's options read
// it for a table with tableProps, see engine.Request.OptionsFor, else the
// default budget), plus room for the runtime and for the files being
// written, unless GOMEMLIMIT is set, so that the garbage collector keeps
// the process near its budget instead of letting the heap double between
// collections. tableProps may be nil (the target file size is then the
// request's, or Iceberg's default). Pass a checked request, so that its
// options are not parsed again.
func LimitMemory(req engine.Request, tableProps map[string]string) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	o, err := req.OptionsFor(tableProps)
	if err != nil {
		// A request that does not parse keeps the default: the rewrite
		// refuses it itself.
		o = engine.Options{MaxGroupMemoryBytes: spill.DefaultMemoryBudget()}
	}
	LimitMemoryTo(o, req.BinPacks())
}

// LimitMemoryTo is LimitMemory for a rewrite whose options are known (see
// engine.Prepared.Options), and that bin-packs when binpack is set (see
// engine.Prepared.BinPacks).
func LimitMemoryTo(o engine.Options, binpack bool) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	files := runtime.GOMAXPROCS(0)
	limit := o.MaxGroupMemoryBytes + memoryLimitRoom + writeRoom(o.TargetFileSize, files)
	if binpack {
		limit += writeRoom(o.TargetFileSize, files)
	}
	debug.SetMemoryLimit(limit)
}

// memoryLimitRoom is what the process may use beyond the groups' budget
// and the files being written: the runtime, the catalog, the scan's
// read-ahead and the collector's headroom. A spilled sort holds about its
// budget plus 40-50 MB live (docs/perf-history.md); with 64 MiB of room the heap
// sat at the limit and the collector ran back to back, 1.4-1.6x the
// in-memory sort's CPU at a 64 MiB budget, against 1.25x with 128 MiB.
const memoryLimitRoom = 128 << 20

// writeRoom is the room for the files being written at once, about one
// per core: each holds the row group it is writing (up to the file, and
// about 50 MB at Iceberg's row-group limit of 1,048,576 rows of points)
// and the batches on their way to it. Without it, at 128 MiB files the
// live heap (about 400 MB) sat above the limit and the collector took a
// third of the CPU (docs/perf-history.md, "Memory at large target files").
func writeRoom(target int64, files int) int64 {
	return int64(files) * 2 * min(max(target, 0), writeRoomPerFile)
}

// A bin-pack reads and writes a part of each group per core at once
// (engine.Prepared.BinPacks), so each core's file is always being written
// while its part's read holds the batches on their way to it: the limit
// counts writeRoom twice. At writeRoom once, the 10 GB group's bin-pack
// in parts collected twice as often and took 277 s against one stream's
// 273 s; at twice, 235 s (docs/perf-history.md, "A bin-pack read and
// written in parts").

// writeRoomPerFile caps the row group counted for one file being written.
const writeRoomPerFile = 64 << 20
