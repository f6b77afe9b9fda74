package delta

import (
	"context"
	"fmt"
	"time"
)

// VacuumResult is the outcome of Table.Vacuum, encoded as is by the
// commands that print it as JSON.
type VacuumResult struct {
	// Location is the table's location, as the caller named it.
	Location string `json:"location"`
	// Version is the table version the vacuum kept the files of.
	Version int64 `json:"version"`
	// RetainMillis is the retention kept, in milliseconds; Cutoff is the
	// instant it reaches back to.
	RetainMillis int64     `json:"retain_ms"`
	Cutoff       time.Time `json:"cutoff"`
	DryRun       bool      `json:"dry_run"`
	// Files are the files planned for deletion (on a dry run, those a real
	// run would delete), in the order they are deleted.
	Files []VacuumFile `json:"files"`
	// DeletedCount is how many of Files were deleted: all of them unless
	// the run failed or was a dry run (zero then).
	DeletedCount int `json:"deleted_files_count"`
	// Bytes is the size of Files.
	Bytes int64 `json:"bytes"`
	// TempFiles is how many of Files are temporary files killed writers
	// left (of data files, commits, checkpoints and _last_checkpoint),
	// planned only once older than the retention and delta.MinTempFileAge.
	TempFiles int `json:"temp_files_count"`
	// Kept are the symbolic links the vacuum found and never deletes (to
	// a directory, to nothing or to a special file), with the reason.
	Kept []VacuumKept `json:"kept_files"`
	// KeptCount is len(Kept).
	KeptCount int `json:"kept_files_count"`
}

// VacuumKept is one path a vacuum kept, by its table-relative path, and
// why (a Link* kind).
type VacuumKept struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// VacuumFile is one file a vacuum deletes, by its table-relative path.
type VacuumFile struct {
	Path  string `json:"path"`
	Bytes int64  `json:"bytes"`
}

// Retain returns the retention the vacuum kept.
func (r *VacuumResult) Retain() time.Duration {
	return time.Duration(r.RetainMillis) * time.Millisecond
}

// Vacuum plans a vacuum of the table's current version (PlanVacuum) and,
// unless cfg.DryRun, deletes the planned files. location names the table
// in the result. When deletions fail part way, the result says how many
// went and the error says why; a killed run leaves the table readable, as
// only unreferenced files are deleted, and the next run deletes the rest.
func (t *Table) Vacuum(ctx context.Context, location string, cfg VacuumConfig) (*VacuumResult, error) {
	if cfg.Now.IsZero() {
		cfg.Now = time.Now()
	}
	plan, err := t.PlanVacuum(ctx, cfg)
	if err != nil {
		return nil, err
	}
	res := &VacuumResult{Location: location, Version: plan.Version, RetainMillis: plan.Retain.Milliseconds(),
		Cutoff: cfg.Now.Add(-plan.Retain).UTC(), DryRun: cfg.DryRun, Bytes: plan.Bytes, TempFiles: plan.TempFiles, Files: []VacuumFile{}}
	for _, f := range plan.Files {
		res.Files = append(res.Files, VacuumFile{Path: f.Path, Bytes: f.Size})
	}
	res.Kept = []VacuumKept{}
	for _, f := range plan.Kept {
		res.Kept = append(res.Kept, VacuumKept{Path: f.Path, Reason: f.Link})
	}
	res.KeptCount = len(res.Kept)
	if cfg.DryRun {
		return res, nil
	}
	res.DeletedCount, err = plan.execute(ctx, t, cfg.Deleted)
	if err != nil {
		return res, fmt.Errorf("delta: vacuum deleted %d of %d files: %w", res.DeletedCount, len(plan.Files), err)
	}
	return res, nil
}
