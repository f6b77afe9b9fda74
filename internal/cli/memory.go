package cli

import (
	"os"
	"runtime/debug"

	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/engine/spill"
)

// LimitMemory sets the Go runtime's soft memory limit to the memory
// budget of req (its max-group-memory-bytes as the request's options read
// it, see engine.Request.OptionsFor, else the default budget), plus room
// for the runtime, unless GOMEMLIMIT is set, so that the garbage collector
// keeps the process near its budget instead of letting the heap double
// between collections. Pass a checked request, so that its options are
// not parsed again.
func LimitMemory(req engine.Request) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	budget := spill.DefaultMemoryBudget()
	if o, err := req.OptionsFor(nil); err == nil {
		// A request that does not parse keeps the default: the rewrite
		// refuses it itself.
		budget = o.MaxGroupMemoryBytes
	}
	debug.SetMemoryLimit(budget + memoryLimitRoom)
}

// memoryLimitRoom is what the process may use beyond the groups' budget:
// the runtime, the catalog, the scan's read-ahead, the file writers and
// the collector's headroom. A spilled sort holds about its budget plus
// 40-50 MB live (docs/perf.md); with 64 MiB of room the heap sat at the
// limit and the collector ran back to back, 1.4-1.6x the in-memory sort's
// CPU at a 64 MiB budget, against 1.25x with 128 MiB.
const memoryLimitRoom = 128 << 20
