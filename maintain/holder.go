package maintain

import (
	"os"
	"strconv"
	"strings"
)

// A lease owner written by NewLeaseOwner reads "host:pid:start:token",
// start being the holder process's start time as the operating system
// counts it (clock ticks since boot on Linux, 0 where unknown). A holder
// on this host whose process is gone, or whose pid now belongs to a
// process started at another time, cannot release its lease any more (it
// was killed or crashed); AcquireLease takes such a lease over at once
// rather than waiting out its ttl.

// leaseOwner formats an owner for the process pid started at start.
func leaseOwner(host string, pid int, start uint64, token string) string {
	return host + ":" + strconv.Itoa(pid) + ":" + strconv.FormatUint(start, 10) + ":" + token
}

// parseOwner splits an owner written by leaseOwner; ok is false for any
// other form (a caller's own name, an older owner without the start).
func parseOwner(owner string) (host string, pid int, start uint64, ok bool) {
	parts := strings.Split(owner, ":")
	if len(parts) < 4 {
		return "", 0, 0, false
	}
	n := len(parts)
	pid, err := strconv.Atoi(parts[n-3])
	if err != nil || pid <= 0 {
		return "", 0, 0, false
	}
	start, err = strconv.ParseUint(parts[n-2], 10, 64)
	if err != nil {
		return "", 0, 0, false
	}
	return strings.Join(parts[:n-3], ":"), pid, start, true
}

// holderGone reports whether owner is a process of this host that no
// longer runs. An owner of another host, of a form it cannot read, or
// whose process it cannot check counts as alive.
func holderGone(owner string) bool {
	host, pid, start, ok := parseOwner(owner)
	if !ok {
		return false
	}
	if me, err := os.Hostname(); err != nil || me != host {
		return false
	}
	if pid == os.Getpid() {
		return start != 0 && start != processStart(pid)
	}
	if processGone(pid) {
		return true
	}
	// The pid runs: it is the holder unless it started at another time
	// (the pid was reused).
	now := processStart(pid)
	return start != 0 && now != 0 && now != start
}

// processStart returns when process pid started, in clock ticks since
// boot, or 0 when it cannot tell (no /proc).
func processStart(pid int) uint64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The command name, in parentheses, may hold spaces; fields count
	// from after its closing parenthesis. starttime is field 22 of the
	// line, the 20th after the name.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return 0
	}
	v, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return 0
	}
	return v
}
