package engine

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/optval"
)

func TestParseOptionsUnitsAndBareKeys(t *testing.T) {
	o, err := optionsOf(map[string]string{OptTargetFileSize: "128MiB", OptMaxFileGroupSize: "1GB", OptRewriteAll: ""}, nil)
	require.NoError(t, err)
	assert.Equal(t, int64(128<<20), o.TargetFileSize)
	assert.Equal(t, int64(96<<20), o.MinFileSize, "defaults follow a target given with a unit")
	assert.Equal(t, int64(1e9), o.MaxFileGroupSize)
	assert.True(t, o.RewriteAll, "a bare boolean key means true")

	_, err = optionsOf(map[string]string{OptMinInputFiles: ""}, nil)
	require.ErrorIs(t, err, optval.ErrBad)
	assert.ErrorContains(t, err, "option min-input-files needs a value")
	me, ok := errors.AsType[*optval.MissingError](err)
	require.True(t, ok, "the error names the option")
	assert.Equal(t, OptMinInputFiles, me.Option)
	_, err = optionsOf(map[string]string{OptTargetFileSize: "128 furlongs"}, nil)
	require.ErrorIs(t, err, optval.ErrBad)
	assert.ErrorContains(t, err, "target-file-size-bytes")
}

// TestParseOptionsSizeLimits checks that a file size too large to work
// with is refused by name with the maximum, as an option or as the table
// property, instead of overflowing the sizes derived from it.
func TestParseOptionsSizeLimits(t *testing.T) {
	for kv, want := range map[[2]string]string{
		{OptTargetFileSize, "1000000TiB"}:          "at most 1024TiB (1125899906842624 bytes)",
		{OptTargetFileSize, "9223372036854775807"}: "at most 1024TiB (1125899906842624 bytes)",
		{OptMinFileSize, "2048TiB"}:                "at most 1024TiB (1125899906842624 bytes)",
		{OptMaxFileSize, "9000000TB"}:              "at most 2048TiB (2251799813685248 bytes)",
	} {
		_, err := optionsOf(map[string]string{kv[0]: kv[1]}, nil)
		require.ErrorIs(t, err, optval.ErrBad, "%v", kv)
		assert.ErrorContains(t, err, kv[0]+"=")
		assert.ErrorContains(t, err, want)
		assert.NotContains(t, err.Error(), "(-", "no overflowed size")
	}
	_, err := optionsOf(nil, map[string]string{table.PropTargetFileSize: "1000000TiB"})
	require.ErrorIs(t, err, optval.ErrBad)
	assert.ErrorContains(t, err, table.PropTargetFileSize)
	assert.ErrorContains(t, err, "at most 1024TiB")

	o, err := optionsOf(map[string]string{OptTargetFileSize: "1024TiB", OptMaxFileGroupSize: "9223372036854775807"}, nil)
	require.NoError(t, err, "the maximum itself, and a plain byte count that fits int64")
	assert.Equal(t, int64(1<<50), o.TargetFileSize)
	assert.Equal(t, int64(1<<50)*9/5, o.MaxFileSize)
	assert.Equal(t, int64(9223372036854775807), o.MaxFileGroupSize)
}

// optionsOf is the options of a request of kv on a table of props.
func optionsOf(kv, props map[string]string) (Options, error) {
	return Request{Options: kv}.OptionsFor(props)
}
