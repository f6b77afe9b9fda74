package verify

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/spatial"
)

// TestDigestEncodeRoundTrip: a digest, the empty one with its infinite
// extent included, survives Encode and DecodeDigest; a wrong length is an
// error.
func TestDigestEncodeRoundTrip(t *testing.T) {
	for _, d := range []Digest{
		NewDigest(),
		{Rows: 3, Sum: 1<<63 + 5, Xor: 42, Extent: spatial.Bound{MinX: -180, MinY: -90.5, MaxX: 179.25, MaxY: 90}},
	} {
		b := d.Encode()
		require.Len(t, b, digestBytes)
		got, err := DecodeDigest(b)
		require.NoError(t, err)
		assert.Equal(t, d, got)
	}
	_, err := DecodeDigest(make([]byte, 55))
	assert.ErrorContains(t, err, "55 bytes, want 56")
}
