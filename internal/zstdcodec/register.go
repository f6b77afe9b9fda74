//go:build !arrowzstd

package zstdcodec

// Importing the package registers the codec, unless the binary is built
// with the arrowzstd tag: benchmarks build peers' runs that way, so a
// peer compresses its pages with arrow-go's codec, as it ships.
func init() { register() }
