package delta

import (
	"context"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"
)

// DefaultDeletedFileRetention is delta.deletedFileRetentionDuration when
// unset: one week.
const DefaultDeletedFileRetention = 7 * 24 * time.Hour

// RetentionError refuses a vacuum whose retention is below the table's floor
// without Force.
type RetentionError struct {
	Retain, Floor time.Duration
}

func (e *RetentionError) Error() string {
	return fmt.Sprintf("delta: vacuum retention %s is below the table's delta.deletedFileRetentionDuration %s; "+
		"concurrent readers and writers may still need those files (force to override)", e.Retain, e.Floor)
}

// DeletedFileRetention is the table's delta.deletedFileRetentionDuration,
// a Spark interval such as "interval 7 days" or "interval 168 hours".
func (s *Snapshot) DeletedFileRetention() (time.Duration, error) {
	v := s.Config("delta.deletedFileRetentionDuration", "")
	if v == "" {
		return DefaultDeletedFileRetention, nil
	}
	d, err := ParseInterval(v)
	if err != nil {
		return 0, fmt.Errorf("delta.deletedFileRetentionDuration: %w", err)
	}
	return d, nil
}

var intervalUnits = map[string]time.Duration{
	"nanosecond": time.Nanosecond, "microsecond": time.Microsecond, "millisecond": time.Millisecond,
	"second": time.Second, "minute": time.Minute, "hour": time.Hour, "day": 24 * time.Hour, "week": 7 * 24 * time.Hour,
}

// ParseInterval parses a Spark calendar interval of fixed-length units:
// "interval 1 week", "interval 36 hours 30 minutes", "7 days".
func ParseInterval(s string) (time.Duration, error) {
	words := strings.Fields(strings.ToLower(strings.TrimSpace(s)))
	if len(words) > 0 && words[0] == "interval" {
		words = words[1:]
	}
	if len(words) == 0 || len(words)%2 != 0 {
		return 0, fmt.Errorf("invalid interval %q, want e.g. \"interval 7 days\"", s)
	}
	var total time.Duration
	for i := 0; i < len(words); i += 2 {
		n, err := strconv.ParseInt(words[i], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("invalid interval %q: %q is not a whole number", s, words[i])
		}
		unit, ok := intervalUnits[strings.TrimSuffix(words[i+1], "s")]
		if !ok {
			return 0, fmt.Errorf("invalid interval %q: unknown unit %q (months and years have no fixed length)", s, words[i+1])
		}
		total += time.Duration(n) * unit
	}
	return total, nil
}

// TableRetention, as VacuumConfig.Retain, keeps what the table's
// delta.deletedFileRetentionDuration says to keep.
const TableRetention time.Duration = -1

// VacuumConfig says what a vacuum may delete.
type VacuumConfig struct {
	// Retain keeps files removed less than Retain ago, and untracked files
	// younger than that. TableRetention (negative) means the table's
	// retention; zero keeps nothing and, like any value below the table's
	// floor, needs Force.
	Retain time.Duration
	// Force allows Retain below the table's delta.deletedFileRetentionDuration.
	Force bool
	// Now is the reference time (default time.Now()).
	Now time.Time
	// DryRun makes Table.Vacuum plan only: it deletes nothing.
	DryRun bool
	// Deleted, when set, is called by Table.Vacuum after each file it
	// deletes, in order: progress for a caller that shows it.
	Deleted func(FileInfo)
}

// VacuumPlan lists the files a vacuum deletes.
type VacuumPlan struct {
	Version int64
	Retain  time.Duration
	Files   []FileInfo
	Bytes   int64
}

// PlanVacuum lists the files under the table that no longer belong to it:
// not referenced by the current snapshot (data files and their deletion
// vectors), not removed inside the retention window, and last modified
// before it (so in-flight writes are kept). _delta_log and other
// underscore- or dot-prefixed files and directories are never touched, except
// partition directories and the temporary files of killed writers. Vacuum writes to the table, so the writer-side
// protocol checks must pass when the table has vacuumProtocolCheck; otherwise
// the reader checks suffice, as in Delta.
func (t *Table) PlanVacuum(ctx context.Context, cfg VacuumConfig) (*VacuumPlan, error) {
	s, err := t.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	retain, err := s.vacuumRetention(cfg)
	if err != nil {
		return nil, err
	}
	now := cfg.Now
	if now.IsZero() {
		now = time.Now()
	}
	keep, err := referencedFiles(s, now.Add(-retain))
	if err != nil {
		return nil, err
	}
	files, err := t.Store.List(ctx, "", true)
	if err != nil {
		return nil, err
	}
	plan := &VacuumPlan{Version: s.Version, Retain: retain}
	cutoff := now.Add(-retain)
	for _, f := range files {
		if keep[f.Path] || hiddenPath(f.Path, s.Metadata.PartitionColumns) || !f.ModTime.Before(cutoff) {
			continue
		}
		plan.Files = append(plan.Files, f)
		plan.Bytes += f.Size
	}
	return plan, nil
}

// CheckVacuum checks, without listing any file, that a vacuum of the
// table's current version may run with cfg, as PlanVacuum would: the
// protocol allows it, and the retention is not below the table's floor
// unless forced (a *RetentionError). It returns the retention the vacuum
// would keep.
func (t *Table) CheckVacuum(ctx context.Context, cfg VacuumConfig) (time.Duration, error) {
	s, err := t.Snapshot(ctx)
	if err != nil {
		return 0, err
	}
	return s.vacuumRetention(cfg)
}

// vacuumRetention checks the protocol for a vacuum of s and returns the
// retention cfg asks for, refusing one below the floor without Force.
func (s *Snapshot) vacuumRetention(cfg VacuumConfig) (time.Duration, error) {
	if s.Protocol.HasReaderFeature("vacuumProtocolCheck") || s.Protocol.HasWriterFeature("vacuumProtocolCheck") {
		if err := CheckWrite(s.Protocol, s.Metadata); err != nil {
			return 0, err
		}
	}
	floor, err := s.DeletedFileRetention()
	if err != nil {
		return 0, err
	}
	retain := cfg.Retain
	if retain < 0 {
		retain = floor
	}
	if retain < floor && !cfg.Force {
		return 0, &RetentionError{Retain: retain, Floor: floor}
	}
	return retain, nil
}

// referencedFiles is every path the snapshot and the tombstones removed after
// cutoff still need, with their deletion vector files. A tombstone without a
// deletionTimestamp counts as removed at time 0.
func referencedFiles(s *Snapshot, cutoff time.Time) (map[string]bool, error) {
	keep := map[string]bool{}
	addRef := func(p string, dv *DeletionVector) error {
		d, err := decodePath(p)
		if err != nil {
			return err
		}
		keep[path.Clean(d)] = true
		if dv != nil && dv.StorageType != "i" {
			dp, err := dv.FilePath()
			if err != nil {
				return err
			}
			keep[path.Clean(dp)] = true
		}
		return nil
	}
	for _, f := range s.Files {
		if err := addRef(f.Path, f.DeletionVector); err != nil {
			return nil, err
		}
	}
	for _, r := range s.Tombstones {
		// A remove without deletionTimestamp reads as removed at 0, as in
		// Delta's own reader: past any retention.
		if r.DeletionTimestamp == nil || time.UnixMilli(*r.DeletionTimestamp).Before(cutoff) {
			continue
		}
		if err := addRef(r.Path, r.DeletionVector); err != nil {
			return nil, err
		}
	}
	return keep, nil
}

// hiddenPath says whether any element of p is hidden from vacuum: a name
// starting with '_' or '.', unless it is a partition directory ("col=value")
// or a data file a killed writer left under LocalStorage's temporary name.
func hiddenPath(p string, partitionCols []string) bool {
	segs := strings.Split(p, "/")
	for i, seg := range segs {
		if !strings.HasPrefix(seg, "_") && !strings.HasPrefix(seg, ".") {
			continue
		}
		if i == len(segs)-1 && isTempName(seg) {
			continue
		}
		isPartition := false
		for _, c := range partitionCols {
			if strings.HasPrefix(seg, c+"=") {
				isPartition = true
			}
		}
		if !isPartition {
			return true
		}
	}
	return false
}

// Execute deletes the planned files and returns how many it deleted. A
// killed run leaves the table readable: only unreferenced files go.
func (p *VacuumPlan) Execute(ctx context.Context, t *Table) (int, error) {
	return p.execute(ctx, t, nil)
}

func (p *VacuumPlan) execute(ctx context.Context, t *Table, deleted func(FileInfo)) (int, error) {
	for i, f := range p.Files {
		if err := ctx.Err(); err != nil {
			return i, err
		}
		if err := t.Store.Delete(ctx, f.Path); err != nil {
			return i, err
		}
		if deleted != nil {
			deleted(f)
		}
	}
	return len(p.Files), nil
}

// isTempName reports whether name is a temporary file LocalStorage writes
// before publishing an object (".NAME.tmp-DIGITS", see Create and put).
func isTempName(name string) bool {
	i := strings.LastIndex(name, ".tmp-")
	if !strings.HasPrefix(name, ".") || i <= 1 || i+len(".tmp-") == len(name) {
		return false
	}
	for _, c := range name[i+len(".tmp-"):] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
