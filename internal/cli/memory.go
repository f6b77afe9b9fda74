package cli

import (
	"os"
	"runtime/debug"
	"strconv"

	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/engine/spill"
)

// LimitMemory sets the Go runtime's soft memory limit to the rewrite's
// memory budget plus room for the runtime, unless GOMEMLIMIT is set, so
// that the garbage collector keeps the process near its budget instead of
// letting the heap double between collections.
func LimitMemory(options map[string]string) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	budget := spill.DefaultMemoryBudget()
	if v, ok := options[engine.OptMaxGroupMemory]; ok {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 {
			budget = n
		}
	}
	debug.SetMemoryLimit(budget + memoryLimitRoom)
}

// memoryLimitRoom is what the process may use beyond the groups' budget:
// the runtime, the catalog and the scan machinery.
const memoryLimitRoom = 64 << 20
