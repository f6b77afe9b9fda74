package bench

// The defaults bench, quickstart and the docs share: one target file size
// rule and one window area, so that their figures compare.
const (
	// DefaultTargetFiles is how many files the default target file size
	// aims at: a table's bytes divided by this (DefaultTargetFileSize).
	DefaultTargetFiles = 64
	// MinDefaultTargetFileSize is the smallest default target file size,
	// so that a small table is not cut into tiny files.
	MinDefaultTargetFileSize = 64 << 10
	// DefaultWindowArea is the area of a generated query window, as a
	// fraction of the data extent's area (1%).
	DefaultWindowArea = 0.01
)

// DefaultTargetFileSize is the target file size bench and quickstart use
// for a table of tableBytes when none is given: tableBytes /
// DefaultTargetFiles, at least MinDefaultTargetFileSize.
func DefaultTargetFileSize(tableBytes int64) int64 {
	return max(tableBytes/DefaultTargetFiles, MinDefaultTargetFileSize)
}
