package cli_test

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/geocompact/geocompact/cmd/internal/cli"
	"github.com/geocompact/geocompact/engine"
)

// TestLimitMemory checks that the Go memory limit follows the budget the
// user gave, in any form the engine accepts (units included), that a
// value the engine refuses leaves the default budget in place, and that
// the limit leaves room for the files being written, by the target file
// size the request or else the table gives, twice for a bin-pack (whose
// parts each write a file at once).
func TestLimitMemory(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	t.Cleanup(func() { debug.SetMemoryLimit(math.MaxInt64) })
	def, err := engine.Request{}.OptionsFor(nil)
	assert.NoError(t, err)
	const room = 128 << 20
	files := int64(runtime.GOMAXPROCS(0))
	small := files * 2 * (1 << 20) // two 1 MiB files' worth per file written
	for _, tc := range []struct {
		value string
		want  int64
	}{
		{"2GiB", 2<<30 + room + small},
		{"536870912", 512<<20 + room + small},
		{"1.5 GiB", 3<<29 + room + small},
		{"300MB", 300e6 + room + small},
		{"lots", def.MaxGroupMemoryBytes + room}, // refused: the default budget, no file room
	} {
		t.Run(tc.value, func(t *testing.T) {
			req, _ := engine.Request{Curve: "hilbert", Options: map[string]string{
				engine.OptMaxGroupMemory: tc.value, engine.OptTargetFileSize: "1048576"}}.Check()
			cli.LimitMemory(req, nil)
			assert.Equal(t, tc.want, debug.SetMemoryLimit(-1))
		})
	}

	large := files * 2 * (64 << 20) // a row group of at most 64 MiB counted per file
	sorted := engine.Request{Curve: "hilbert"}
	cli.LimitMemory(sorted, nil)
	assert.Equal(t, def.MaxGroupMemoryBytes+room+large, debug.SetMemoryLimit(-1), "Iceberg's default target, 512 MiB")
	cli.LimitMemory(engine.Request{}, nil)
	assert.Equal(t, def.MaxGroupMemoryBytes+room+2*large, debug.SetMemoryLimit(-1), "a bin-pack: twice the files' room")
	cli.LimitMemory(engine.Request{Strategy: engine.Sort}, nil)
	assert.Equal(t, def.MaxGroupMemoryBytes+room+large, debug.SetMemoryLimit(-1), "strategy sort by the table's order")

	props := map[string]string{"write.target-file-size-bytes": "2097152"}
	cli.LimitMemory(sorted, props)
	assert.Equal(t, def.MaxGroupMemoryBytes+room+files*2*(2<<20), debug.SetMemoryLimit(-1), "the table's target")

	req, _ := engine.Request{SortOrder: "bbox_minx", Options: map[string]string{engine.OptTargetFileSize: "134217728"}}.Check()
	cli.LimitMemory(req, props)
	assert.Equal(t, def.MaxGroupMemoryBytes+room+large, debug.SetMemoryLimit(-1), "the request's target over the table's")

	cli.LimitMemoryTo(def, true)
	assert.Equal(t, def.MaxGroupMemoryBytes+room+2*large, debug.SetMemoryLimit(-1), "a prepared bin-pack")
	cli.LimitMemoryTo(def, false)
	assert.Equal(t, def.MaxGroupMemoryBytes+room+large, debug.SetMemoryLimit(-1), "a prepared sort")
}
