// Package zstdcodec replaces arrow-go's zstd codec for Parquet pages with
// one whose encoders cost a fraction of the memory and survive garbage
// collections. Importing it registers the codec.
//
// arrow-go compresses every page with an encoder from a sync.Pool built
// with zstd's default 8 MiB window, so each encoder keeps a 16 MiB
// history buffer, and the pool drops its encoders at every other
// collection, so a busy writer allocates them again and again: under a
// soft memory limit that churn is itself what makes the collector run. A
// page is about 1 MiB (the writer's data page size), so a window of a
// page's size finds the same matches; encoders here keep a window of
// Window bytes and wait in a free list the collector does not empty.
// Decoding is arrow-go's own.
package zstdcodec

import (
	"runtime"
	"sync"

	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/klauspost/compress/zstd"
)

// DefaultLevel is the level of a page whose writer names none: zstd's
// level 1, which leaves literals without entropy coding when it finds no
// matches. Rewriting a 1 GiB table of points it wrote 0.6% more bytes than
// level 3 in a third less time; a level named (Iceberg's
// write.parquet.compression-level) is used as given.
const DefaultLevel = zstd.SpeedFastest

// Window is the encoders' window: the largest distance a match may
// reach back, and about the history each encoder keeps.
const Window = 1 << 20

// register puts the codec in arrow-go's place (see register.go).
func register() {
	c, err := compress.GetCodec(compress.Codecs.Zstd)
	if err != nil {
		panic(err)
	}
	base, ok := c.(baseCodec)
	if !ok {
		panic("zstdcodec: arrow-go's zstd codec does not decode with errors and streams")
	}
	compress.RegisterCodec(compress.Codecs.Zstd, &codec{baseCodec: base, free: map[zstd.EncoderLevel][]*zstd.Encoder{}})
}

// baseCodec is what arrow-go's zstd codec does and this one keeps.
type baseCodec interface {
	compress.ErrorCodec
	compress.StreamingCodec
}

// codec is arrow-go's zstd codec with its own page encoders: decoding,
// streams and CompressBound are arrow-go's.
type codec struct {
	baseCodec

	mu   sync.Mutex
	free map[zstd.EncoderLevel][]*zstd.Encoder
}

// keep is how many idle encoders of a level the free list keeps: one per
// page being compressed at once, which is at most one per core.
func keep() int { return runtime.GOMAXPROCS(0) }

func (c *codec) Encode(dst, src []byte) []byte {
	return c.EncodeLevel(dst, src, compress.DefaultCompressionLevel)
}

func (c *codec) EncodeLevel(dst, src []byte, level int) []byte {
	l := DefaultLevel
	if level != compress.DefaultCompressionLevel {
		l = zstd.EncoderLevelFromZstd(level)
	}
	enc := c.get(l)
	out := enc.EncodeAll(src, dst[:0])
	c.put(l, enc)
	return out
}

func (c *codec) get(l zstd.EncoderLevel) *zstd.Encoder {
	c.mu.Lock()
	if n := len(c.free[l]); n > 0 {
		enc := c.free[l][n-1]
		c.free[l] = c.free[l][:n-1]
		c.mu.Unlock()
		return enc
	}
	c.mu.Unlock()
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(l), zstd.WithWindowSize(Window), zstd.WithLowerEncoderMem(true),
		zstd.WithEncoderConcurrency(1), zstd.WithZeroFrames(true))
	if err != nil {
		// Only invalid options fail, and these are constant.
		panic(err)
	}
	return enc
}

func (c *codec) put(l zstd.EncoderLevel, enc *zstd.Encoder) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.free[l]) < keep() {
		c.free[l] = append(c.free[l], enc)
	}
}
