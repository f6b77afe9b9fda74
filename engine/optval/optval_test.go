package optval_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/engine/optval"
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
	for _, in := range []string{"", "512k", "12 parsecs", "-1MiB", "MiB", "1e3", "99999999TiB"} {
		_, err := optval.ParseSize(in)
		assert.ErrorContains(t, err, "e.g. 128MiB", in)
	}
}
