package cli

import (
	"os"
	"runtime/debug"

	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/engine/spill"
)

// LimitMemory sets the Go runtime's soft memory limit to the memory
// budget of req, a checked request (its max-group-memory-bytes as Check
// parsed it, or the default budget), plus room for the runtime, unless
// GOMEMLIMIT is set, so that the garbage collector keeps the process near
// its budget instead of letting the heap double between collections.
func LimitMemory(req engine.Request) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	budget := req.MemoryBudget()
	if budget == 0 {
		// An unchecked request: the rewrite checks it itself; until then
		// keep the default.
		budget = spill.DefaultMemoryBudget()
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
