package maintain

import (
	"os"
	"os/exec"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestHolderGone(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("process start times come from /proc")
	}
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	me := os.Getpid()
	start := processStart(me)
	if start == 0 {
		t.Fatal("no start time for this process")
	}
	for _, tc := range []struct {
		name  string
		owner string
		gone  bool
	}{
		{"this process", leaseOwner(host, me, start, "t"), false},
		{"exited process", leaseOwner(host, dead.Process.Pid, 1, "t"), true},
		{"pid reused by a later process", leaseOwner(host, 1, processStart(1)+1, "t"), true},
		{"live process", leaseOwner(host, 1, processStart(1), "t"), false},
		{"other host", leaseOwner(host+"-elsewhere", dead.Process.Pid, 1, "t"), false},
		{"host with colons", leaseOwner("a:b", dead.Process.Pid, 1, "t"), false},
		{"old owner form", host + ":" + "999999999:token", false},
		{"a chosen name", "nightly-job", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.gone, holderGone(tc.owner), tc.owner)
		})
	}
	h, pid, st, ok := parseOwner(leaseOwner("a:b", 42, 7, "tok"))
	assert.True(t, ok)
	assert.Equal(t, "a:b", h)
	assert.Equal(t, 42, pid)
	assert.Equal(t, uint64(7), st)
}
