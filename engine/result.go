package engine

import (
	"time"

	"github.com/geocompact/geocompact/table/layouts"
)

// Result is the outcome of one rewrite, the row Iceberg's
// rewrite_data_files procedure returns plus what a person needs to judge
// it. The five Iceberg counters keep their Iceberg names.
//
// A Delta table's result (Format table.FormatDelta) names its commits versions
// when encoded (see MarshalJSON).
type Result struct {
	// Format is table.FormatDelta for a Delta table's rewrite (the table's
	// FormatName), empty for an Iceberg table's.
	Format string `json:"format,omitempty"`

	RewrittenDataFilesCount int   `json:"rewritten_data_files_count"`
	AddedDataFilesCount     int   `json:"added_data_files_count"`
	RewrittenBytesCount     int64 `json:"rewritten_bytes_count"`
	FailedDataFilesCount    int   `json:"failed_data_files_count"`
	RemovedDeleteFilesCount int   `json:"removed_delete_files_count"`

	// Table-wide figures before and after (after == before on a dry run or
	// a no-op).
	FilesBefore int   `json:"files_before"`
	FilesAfter  int   `json:"files_after"`
	BytesBefore int64 `json:"bytes_before"`
	BytesAfter  int64 `json:"bytes_after"`

	// AddedBytesCount is the size of the files the rewrite wrote.
	AddedBytesCount int64 `json:"added_bytes_count"`
	// SnapshotsCommitted is 1 for an atomic rewrite, up to
	// partial-progress.max-commits with partial progress, 0 for a no-op.
	// A Delta table's are versions (versions_committed in JSON).
	SnapshotsCommitted int `json:"snapshots_committed"`
	// SnapshotIDs are the snapshots this rewrite committed; a Delta
	// table's are the versions it committed (versions in JSON).
	SnapshotIDs []int64 `json:"snapshot_ids,omitempty"`
	// Strategy and SortOrder say how the rows were laid out.
	Strategy  string `json:"strategy"`
	SortOrder string `json:"sort_order,omitempty"`
	// LayoutSource says where the layout came from: layouts.FromRequest,
	// layouts.FromProperty, layouts.FromSortOrder or layouts.FromDefault.
	LayoutSource string `json:"layout_source"`
	// Auto holds what --curve auto chose for each group, with every
	// candidate's estimate; nil for any other layout.
	Auto []AutoChoice `json:"auto,omitempty"`
	// DryRun is set when nothing was written on purpose.
	DryRun bool `json:"dry_run"`
	// NoopReason says why nothing was rewritten and what would change it;
	// empty when something was.
	NoopReason string `json:"noop_reason,omitempty"`
	// Verified is set when every committed group passed verification: row
	// count, bbox extent and content checksum equal before and after.
	Verified bool `json:"verified"`
	// Plan is the plan the rewrite executed.
	Plan *Plan `json:"plan"`
	// Duration is the wall time of the whole rewrite.
	Duration time.Duration `json:"duration_ns"`
}

// LayoutText says how the rewrite laid the table out and, when the layout
// was not the request's, where it came from: "strategy sort by hilbert()
// (table property geocompact.layout)".
func (r *Result) LayoutText() string {
	s := "strategy " + r.Strategy
	if r.SortOrder != "" {
		s += " by " + r.SortOrder
	}
	if r.LayoutSource != "" && r.LayoutSource != layouts.FromRequest {
		s += " (" + r.LayoutSource + ")"
	}
	return s
}
