package optval_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/table/optval"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{
		"134217728": 134217728, "128MiB": 128 << 20, "128mib": 128 << 20, "1GB": 1e9, "1 GiB": 1 << 30,
		"1.5KiB": 1536, "512KB": 512e3, "7B": 7, "2TiB": 2 << 40,
	} {
		got, err := optval.ParseSize(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "512k", "12 parsecs", "-1MiB", "MiB", "1e3"} {
		_, err := optval.ParseSize(in)
		assert.ErrorContains(t, err, "e.g. 128MiB", in)
	}
	for in, want := range map[string]int64{"9223372036854775807": 1<<63 - 1, "9223372036854775807B": 1<<63 - 1, "8388607TiB": 8388607 << 40} {
		got, err := optval.ParseSize(in)
		require.NoError(t, err, "a size that fits int64: %s", in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"9223372036854775808", "99999999TiB", "8EiB", "1e30", "10000000000000000000000000"} {
		_, err := optval.ParseSize(in)
		require.Error(t, err, in)
		if in != "8EiB" && in != "1e30" {
			assert.ErrorContains(t, err, "exceeds the largest size, 9223372036854775807 bytes", in)
		}
	}
}
