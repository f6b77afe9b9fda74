// Package bench builds the spatial tables geocompact is tested and measured
// on, and measures how well a layout prunes: for a set of bbox windows it
// counts the files that iceberg-go's own scan planning opens, per layout.
//
// Generate writes a fragmented table the way streaming ingest leaves one:
// many small commits in arrival order, so every file spans the whole extent.
package bench
