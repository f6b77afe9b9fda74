package cli_test

import (
	"math"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/internal/cli"
)

// TestLimitMemory checks that the Go memory limit follows the budget the
// user gave, in any form the engine accepts (units included), and that a
// value the engine refuses leaves the default budget in place.
func TestLimitMemory(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	t.Cleanup(func() { debug.SetMemoryLimit(math.MaxInt64) })
	def, err := engine.Request{}.OptionsFor(nil)
	assert.NoError(t, err)
	const room = 128 << 20
	for _, tc := range []struct {
		value string
		want  int64
	}{
		{"2GiB", 2<<30 + room},
		{"536870912", 512<<20 + room},
		{"1.5 GiB", 3<<29 + room},
		{"300MB", 300e6 + room},
		{"lots", def.MaxGroupMemoryBytes + room},
	} {
		t.Run(tc.value, func(t *testing.T) {
			req, _ := engine.Request{Options: map[string]string{engine.OptMaxGroupMemory: tc.value}}.Check()
			cli.LimitMemory(req)
			assert.Equal(t, tc.want, debug.SetMemoryLimit(-1))
		})
	}
	cli.LimitMemory(engine.Request{})
	assert.Equal(t, def.MaxGroupMemoryBytes+room, debug.SetMemoryLimit(-1))
}
