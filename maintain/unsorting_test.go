package maintain_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/maintain"
	"github.com/geocompact/geocompact/table/icebergtable"
)

// TestMaintainWarnsBeforeUnsorting: a table rewritten with a curve but no
// recorded layout is bin-packed by a default policy; the run says so, and
// how to keep the order.
func TestMaintainWarnsBeforeUnsorting(t *testing.T) {
	t.Parallel()
	const name = "w.t"
	cat := fragmented(t, name, 2000, 12)
	tt, err := icebergtable.Open(t.Context(), cat, name)
	require.NoError(t, err)
	_, err = engine.Rewrite(t.Context(), tt, engine.Request{Curve: "hilbert", Options: map[string]string{"rewrite-all": "true", "target-file-size-bytes": "20000"}})
	require.NoError(t, err)

	p := testPolicy()
	p.Gate.MinAvgFileBytes = 1 << 30
	rep, err := maintain.Run(t.Context(), opened(t, cat, name), maintain.Config{Policy: p, DryRun: true})
	require.NoError(t, err, "%+v", rep.Steps)
	require.Len(t, rep.Warnings, 1, "%+v", rep.Steps)
	assert.Contains(t, rep.Warnings[0], "last rewrite was sorted (hilbert(")
	assert.Contains(t, rep.Warnings[0], "geocompact alter --table w.t --sort-order 'hilbert(")

	p.Rewrite.Curve = "hilbert"
	rep, err = maintain.Run(t.Context(), opened(t, cat, name), maintain.Config{Policy: p, DryRun: true})
	require.NoError(t, err)
	assert.Empty(t, rep.Warnings, "a policy that sorts keeps the order")
}
