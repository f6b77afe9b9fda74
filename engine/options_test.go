package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseOptionsUnitsAndBareKeys(t *testing.T) {
	o, err := ParseOptions(map[string]string{OptTargetFileSize: "128MiB", OptMaxFileGroupSize: "1GB", OptRewriteAll: ""}, nil)
	require.NoError(t, err)
	assert.Equal(t, int64(128<<20), o.TargetFileSize)
	assert.Equal(t, int64(96<<20), o.MinFileSize, "defaults follow a target given with a unit")
	assert.Equal(t, int64(1e9), o.MaxFileGroupSize)
	assert.True(t, o.RewriteAll, "a bare boolean key means true")

	_, err = ParseOptions(map[string]string{OptMinInputFiles: ""}, nil)
	require.ErrorIs(t, err, ErrOption)
	assert.ErrorContains(t, err, "option min-input-files needs a value: --option min-input-files=VALUE")
	_, err = ParseOptions(map[string]string{OptTargetFileSize: "128 furlongs"}, nil)
	require.ErrorIs(t, err, ErrOption)
	assert.ErrorContains(t, err, "target-file-size-bytes")
}
