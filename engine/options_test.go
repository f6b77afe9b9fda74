package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{
		"134217728": 134217728, "128MiB": 128 << 20, "128mib": 128 << 20, "1GB": 1e9, "1 GiB": 1 << 30,
		"1.5KiB": 1536, "512KB": 512e3, "7B": 7, "2TiB": 2 << 40,
	} {
		got, err := ParseSize(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "512k", "12 parsecs", "-1MiB", "MiB", "1e3", "99999999TiB"} {
		_, err := ParseSize(in)
		assert.ErrorContains(t, err, "e.g. 128MiB", in)
	}
}

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
