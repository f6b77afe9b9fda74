package spill

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// DefaultMemoryBudget is the default of max-group-memory-bytes:
// DefaultBudget, or a quarter of the machine's memory (or of the cgroup
// limit) when that is less, but at least MinBudget. A group larger than
// its share is sorted by merging sorted runs from local disk, within
// 1.5x the in-memory sort's time from 64 MiB up (docs/perf.md), so a
// scheduled rewrite stays small on a shared machine without being slow.
func DefaultMemoryBudget() int64 {
	total := physicalMemory()
	if total <= 0 {
		return DefaultBudget
	}
	return max(min(total/4, DefaultBudget), MinBudget)
}

// DefaultBudget is the default memory budget of sorted groups on a
// machine with 512 MiB of memory or more, chosen from the measurements in
// docs/perf-history.md: with the soft memory limit at the budget plus 128 MiB,
// Hilbert at defaults on 1.5M points peaks under 300 MiB of RSS (160 MiB
// peaked at 325 MiB), and binpack stays under 200 MiB.
const DefaultBudget = 128 << 20

// MinBudget is the smallest default budget, on small machines.
const MinBudget = 64 << 20

// physicalMemory reads MemTotal from /proc/meminfo and the cgroup v2
// memory limit; 0 when neither is known.
func physicalMemory() int64 {
	var total int64
	if f, err := os.Open("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
				total = kb << 10
			}
		}
		f.Close()
	}
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if lim, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && lim > 0 && (total == 0 || lim < total) {
			total = lim
		}
	}
	return total
}
