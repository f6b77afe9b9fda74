// Package cluster decides which rows of a file group end up next to each
// other: it maps every row to a clustering key and sorts the rows by it.
// That order decides how many files a bounding-box query must open after a
// rewrite, so it is the heart of spatial compaction. The package is pure
// computation: it reads Arrow record batches it is given and returns new
// ones, and does no I/O.
//
// # Orders
//
// An [Order] is parsed from an Iceberg-style sort order with [ParseOrder]:
//
//	ts DESC NULLS LAST, id          lexicographic (linear), Iceberg semantics
//	zorder(lon, lat)                 Z-order curve over 2 to 4 numeric columns
//	hilbert(geometry)                Hilbert curve over a spatial column's position
//	hilbert()                        Hilbert curve over the row's spatial position
//	str()                            sort-tile-recursive packing of the positions
//	kd()                             a k-d tree of files split by cost for query windows
//
// [CurveOrder] turns a curve name of the registry ([Curves]) (linear, zorder, hilbert, str, kd)
// into an Order. A curve with no arguments runs over the row's spatial position: the
// centre of its bounding box, taken from the bbox columns
// ([spatial.BBoxColumns]), else a GeoParquet 1.1 covering struct column
// (fields xmin, ymin, xmax, ymax), else a geometry column (geoarrow.wkb or a
// binary column of WKB, read with [spatial.Envelope]). A spatial column named
// as a curve argument contributes two dimensions (x and y of the centre).
//
// # Keys
//
// Spatial positions are normalised into an unsigned grid of up to 32 bits
// per axis, either linearly over an extent ([NormalizeExtent], the default;
// values outside the extent clamp to its edge) or by quantiles of a sample
// ([NormalizeQuantile], which resists skewed data). Numeric curve columns
// use an order-preserving encoding ([OrderedFloat64], [OrderedInt64]) taken
// relative to the data's range, keeping the top bits that fit. Rows whose
// position is null, empty or NaN get [NullKey] and sort last.
//
// The 2-D Hilbert index is computed without branches by a parallel prefix
// scan over the bit levels (the per-level state transitions are affine maps
// over GF(4), composed in log2(32) = 5 rounds); 3-D and 4-D indices use
// Skilling's transpose method. [Hilbert], [ZOrder] and [Linear] implement
// [Keyer] for single boxes.
//
// # STR
//
// str is not a curve but a packing: the rows are cut into about
// sqrt(files) vertical slabs at quantiles of x ([STRSlabs]; the file count
// comes from SortOptions.Files), each slab holding a whole number of
// files' rows, and ordered by y within each slab, up in even slabs and
// down in odd ones. Its key is the slab number above the y cell, one
// uint64 like a curve's; the slab boundaries are learned with the other
// statistics ([Stats]) from the same sample of x, so a frozen [Scale]
// keys every batch alike.
//
// # kd
//
// kd is a packing too: a k-d tree over the positions whose leaves are the
// output files (at most one leaf per 64 sample rows). Each split halves a
// node's files at the median of x or y, and the axis is chosen by cost:
// the halves, each split on to its files by the cheapest of three fixed
// ways (across the longer side, across x only, across y only), are met by
// fewer of a set of data-placed sample windows (0.1% and 1% of the extent,
// [KDAreas]). Its key is the leaf above the Hilbert index within it. Files
// must be cut at leaves, not at even counts: [Sorter.CutShift] says so,
// [CellRuns] counts the rows of each leaf and [RunFiles] turns those
// counts into files. The tree is learned with the other statistics and
// travels in a Scale's JSON.
//
// # Sorting
//
// [Sorter] orders the rows of many record batches globally: it computes a
// uint64 key per row, sorts (key, row) pairs with an in-place MSD radix sort
// (stable, because ties are broken by row number) and gathers the columns
// with arrow's Take. Linear orders over several columns sort one column at a
// time from the last to the first, each pass stable; string columns use a
// stable comparison sort.
//
// # Performance
//
// On the shared 2-core VM the figures were taken on (thread CPU time,
// under heavy load): a 2-D Hilbert index costs about 22–33 ns, ten times
// less than the textbook loop or gonum's; a Z-order code about 6 ns. Keys
// plus the sorted permutation for 10M rows take about 1.2 s of CPU and
// 123 MB (12 bytes per row). Figures, conditions and the commands that
// produced them are in docs/perf-cluster.md.
package cluster
