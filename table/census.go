package table

import (
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
	// Files are the live data files.
	Files []CensusFile
}

// CensusFile is one live data file of a Census.
type CensusFile struct {
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
