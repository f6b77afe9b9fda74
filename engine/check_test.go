package engine_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/engine/optval"
)

// TestRequestCheck checks that Check names the field at fault, wraps
// optval.ErrBad, and keeps what it parsed: the memory budget in any unit
// the option takes.
func TestRequestCheck(t *testing.T) {
	for _, tc := range []struct {
		req   engine.Request
		field string
	}{
		{engine.Request{Curve: "hilbret"}, engine.FieldCurve},
		{engine.Request{SortOrder: "zorder("}, engine.FieldSortOrder},
		{engine.Request{Strategy: "shuffle"}, engine.FieldStrategy},
		{engine.Request{Strategy: engine.BinPack, Curve: "hilbert"}, engine.FieldStrategy},
		{engine.Request{Curve: "hilbert", SortOrder: "a"}, ""},
	} {
		_, err := tc.req.Check()
		var re *engine.RequestError
		require.ErrorAs(t, err, &re, "%+v", tc.req)
		assert.Equal(t, tc.field, re.Field, "%+v", tc.req)
		assert.ErrorIs(t, err, optval.ErrBad)
	}
	req, err := engine.Request{Curve: "hilbert", Options: map[string]string{engine.OptMaxGroupMemory: "2GiB"}}.Check()
	require.NoError(t, err)
	assert.Equal(t, int64(2<<30), req.MemoryBudget())
	assert.Zero(t, engine.Request{}.MemoryBudget(), "an unchecked request has no parsed budget")
	_, err = engine.Request{Options: map[string]string{engine.OptMaxGroupMemory: "lots"}}.Check()
	assert.True(t, errors.Is(err, optval.ErrBad))
}

// TestRequestJSON checks the keys a request travels under to a job's
// workers, and that the logger and progress do not travel.
func TestRequestJSON(t *testing.T) {
	b, err := json.Marshal(engine.Request{Strategy: engine.Sort, SortOrder: "a", Where: "a > 1", Options: map[string]string{"k": "v"}, CommitRetries: 2,
		Progress: func(engine.Progress) {}})
	require.NoError(t, err)
	assert.JSONEq(t, `{"strategy":"sort","sort_order":"a","where":"a > 1","options":{"k":"v"},"commit_retries":2}`, string(b))
}
