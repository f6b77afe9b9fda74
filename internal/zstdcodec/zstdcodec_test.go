package zstdcodec

import (
	"bytes"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/require"
)

// page is n bytes that compress: repeated runs of a few random words.
func page(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	words := make([][]byte, 64)
	for i := range words {
		words[i] = make([]byte, 4+r.IntN(12))
		for j := range words[i] {
			words[i][j] = byte(r.IntN(256))
		}
	}
	var b bytes.Buffer
	for b.Len() < n {
		b.Write(words[r.IntN(len(words))])
	}
	return b.Bytes()[:n]
}

func registered(t *testing.T) *codec {
	t.Helper()
	c, err := compress.GetCodec(compress.Codecs.Zstd)
	require.NoError(t, err)
	ours, ok := c.(*codec)
	require.True(t, ok, "the zstd codec registered is %T", c)
	return ours
}

// Pages encoded at every level decode to themselves through arrow-go's
// decoder, and compress.
func TestRoundTrip(t *testing.T) {
	c := registered(t)
	for _, level := range []int{compress.DefaultCompressionLevel, 1, 3, 9} {
		for _, n := range []int{0, 100, 128 << 10, 1 << 20, 3 << 20} {
			src := page(n, uint64(n+level))
			enc := c.EncodeLevel(nil, src, level)
			if n >= 1<<20 {
				require.Less(t, len(enc), n/2, "level %d, %d bytes", level, n)
			}
			dec, err := compress.Decode(c, nil, enc)
			require.NoError(t, err)
			require.True(t, bytes.Equal(src, dec), "level %d, %d bytes round trip", level, n)
		}
	}
}

// A page whose writer names no level is encoded as at zstd's level 1,
// and a level named is used as given.
func TestDefaultLevelIsOne(t *testing.T) {
	c := registered(t)
	src := page(1<<20, 11)
	def := c.EncodeLevel(nil, src, compress.DefaultCompressionLevel)
	require.Equal(t, def, c.EncodeLevel(nil, src, 1))
	require.Equal(t, def, c.Encode(nil, src))
	require.NotEqual(t, def, c.EncodeLevel(nil, src, 3), "level 3 is zstd's default, not ours")

	// With level 1's own settings: literals found no match for are not
	// entropy coded. Bytes of a skewed distribution seldom repeat four
	// at a time, so a block of them is literals.
	r := rand.New(rand.NewPCG(5, 5))
	skewed := make([]byte, 256<<10)
	for i := range skewed {
		skewed[i] = byte(min(255, r.ExpFloat64()*24))
	}
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithWindowSize(Window),
		zstd.WithLowerEncoderMem(true), zstd.WithEncoderConcurrency(1), zstd.WithZeroFrames(true))
	require.NoError(t, err)
	for _, src := range [][]byte{src, skewed} {
		require.Equal(t, enc.EncodeAll(src, nil), c.EncodeLevel(nil, src, compress.DefaultCompressionLevel))
	}
}

// The frames name a window of Window bytes at most, so no decoder needs
// more history than that.
func TestFramesUseTheSmallWindow(t *testing.T) {
	enc := registered(t).EncodeLevel(nil, page(4<<20, 7), compress.DefaultCompressionLevel)
	var h zstd.Header
	require.NoError(t, h.Decode(enc))
	require.False(t, h.SingleSegment, "a 4 MiB page is not one segment")
	require.LessOrEqual(t, h.WindowSize, uint64(Window))
}

// Encoders come back to the free list, at most one per core of a level,
// and a collection does not empty it.
func TestEncodersOutliveCollections(t *testing.T) {
	c := registered(t)
	level := 5 // a level no other test uses
	l := zstd.EncoderLevelFromZstd(level)
	var wg sync.WaitGroup
	for i := range 4 * keep() {
		wg.Go(func() { c.EncodeLevel(nil, page(256<<10, uint64(i)), level) })
	}
	wg.Wait()
	c.mu.Lock()
	idle := slices.Clone(c.free[l])
	c.mu.Unlock()
	require.NotEmpty(t, idle)
	require.LessOrEqual(t, len(idle), keep())
	runtime.GC()
	runtime.GC()
	enc := c.get(l)
	require.Same(t, idle[len(idle)-1], enc, "an idle encoder is reused after two collections")
	c.put(l, enc)
}
