package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/engine"
)

// TestResultJSON: the result encodes the engine's fields, in their order,
// then the runner's; without an engine result, the runner's alone.
func TestResultJSON(t *testing.T) {
	res := &Result{Result: &engine.Result{RewrittenDataFilesCount: 4, SnapshotsCommitted: 1, SnapshotIDs: []int64{9}, Strategy: "sort"},
		Runner: "prism", ShuffleBytes: 1024}
	var out bytes.Buffer
	require.NoError(t, writeResult(&out, res, true))
	engineOnly, err := json.Marshal(res.Result)
	require.NoError(t, err)
	var compact bytes.Buffer
	require.NoError(t, json.Compact(&compact, out.Bytes()))
	assert.Equal(t, string(engineOnly[:len(engineOnly)-1])+`,"runner":"prism","shuffle_bytes":1024}`, compact.String())
	assert.Contains(t, out.String(), `"snapshots_committed": 1`)

	b, err := json.Marshal(Result{Runner: "direct"})
	require.NoError(t, err)
	assert.JSONEq(t, `{"runner":"direct","shuffle_bytes":0}`, string(b))
}
