package engine_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/table/optval"
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
	o, err := req.OptionsFor(nil)
	require.NoError(t, err)
	assert.Equal(t, int64(2<<30), o.MaxGroupMemoryBytes)
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

// TestOptionsFor checks that a request's options are read over the
// table's properties: the table's target file size applies, with the
// sizes around it, unless the request sets them; and sizes are checked
// against the target that applies.
func TestOptionsFor(t *testing.T) {
	props := map[string]string{"write.target-file-size-bytes": "1GiB"}
	for _, tc := range []struct {
		name                   string
		kv                     map[string]string
		target, minSize, maxSz int64
	}{
		{"table's target", nil, 1 << 30, 3 << 28, 9 << 30 / 5},
		{"request's target", map[string]string{engine.OptTargetFileSize: "100MiB"}, 100 << 20, 75 << 20, 180 << 20},
		{"request's minimum under the table's target", map[string]string{engine.OptMinFileSize: "600MiB"}, 1 << 30, 600 << 20, 9 << 30 / 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := engine.Request{Options: tc.kv}.Check()
			require.NoError(t, err)
			o, err := req.OptionsFor(props)
			require.NoError(t, err)
			assert.Equal(t, []int64{tc.target, tc.minSize, tc.maxSz}, []int64{o.TargetFileSize, o.MinFileSize, o.MaxFileSize})
		})
	}
	_, err := engine.Request{Options: map[string]string{engine.OptMinFileSize: "600MiB"}}.OptionsFor(nil)
	assert.ErrorContains(t, err, "min-file-size-bytes (629145600) must be below target-file-size-bytes (536870912)", "the default target applies without the table")
	_, err = engine.Request{Options: map[string]string{engine.OptTargetFileSize: "1MiB", engine.OptMinFileSize: "2MiB"}}.Check()
	assert.ErrorIs(t, err, optval.ErrBad, "sizes around a target the request sets are checked at once")
	_, err = engine.Request{}.OptionsFor(map[string]string{"write.target-file-size-bytes": "big"})
	assert.ErrorIs(t, err, optval.ErrBad)
}
