package table

import (
	"context"
	"time"

	"github.com/geocompact/geocompact/spatial"
)

// Census is what a format that keeps no manifests tells of its table's
// latest version for the health figures: the versions its log keeps and
// its live data files (a Delta table's log).
type Census struct {
	// Versions counts the versions whose commits the log still holds;
	// Oldest and Latest are when the first and the last of them were
	// committed.
	Versions       int
	Oldest, Latest time.Time
	// Bounded says the table has the columns a file's box comes from:
	// the files' boxes are the layout figures' input.
	Bounded bool
	// BBoxPaths, when Bounded, are the Parquet column paths of the
	// xmin, ymin, xmax and ymax columns in the data files ("bbox_minx",
	// "bbox.xmin", or physical names), whose row group statistics bound
	// a file's row groups.
	BBoxPaths [4]string
	// Files are the live data files.
	Files []CensusFile
}

// CensusFile is one live data file of a Census.
type CensusFile struct {
	// Path names the file in messages.
	Path string
	// Open opens the file for reading its footer; the census itself
	// reads no data file.
	Open func(ctx context.Context) (File, error)
	// Partition names the file's partition ("" for an unpartitioned
	// table).
	Partition string
	// Size is the file's size; Records its record count from its
	// statistics (0 without), before deletes.
	Size, Records int64
	// Bound is the file's box from its statistics, when HasBound.
	Bound    spatial.Bound
	HasBound bool
	// DeletionVector says the file carries a deletion vector, which
	// deletes DeletedRecords of its rows and takes DeleteBytes.
	DeletionVector              bool
	DeletedRecords, DeleteBytes int64
}
