package cli

import (
	"os"
	"runtime/debug"

	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/engine/spill"
)

// LimitMemory sets the Go runtime's soft memory limit to the rewrite's
// memory budget (options' max-group-memory-bytes, read by the engine's own
// parser, or the default budget) plus room for the runtime, unless GOMEMLIMIT is set, so
// that the garbage collector keeps the process near its budget instead of
// letting the heap double between collections.
func LimitMemory(options map[string]string) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	budget, err := engine.GroupMemoryBudget(options)
	if err != nil {
		// The rewrite refuses the value itself; until then keep the default.
		budget = spill.DefaultMemoryBudget()
	}
	debug.SetMemoryLimit(budget + memoryLimitRoom)
}

// memoryLimitRoom is what the process may use beyond the groups' budget:
// the runtime, the catalog and the scan machinery.
const memoryLimitRoom = 64 << 20
