package spill

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// DefaultMemoryBudget is the default of max-group-memory-bytes: a quarter
// of the machine's memory (or of the cgroup limit when lower), at least
// 256 MiB and at most 4 GiB, so a scheduled rewrite shares the machine.
func DefaultMemoryBudget() int64 {
	const lo, hi = 256 << 20, 4 << 30
	total := physicalMemory()
	if total <= 0 {
		return 1 << 30
	}
	return min(max(total/4, lo), hi)
}

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
