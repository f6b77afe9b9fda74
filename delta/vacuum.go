package delta

import (
	"context"
	"fmt"
	"os"
	"path"
	"strings"
	"time"
)

// defaultDeletedFileRetention is delta.deletedFileRetentionDuration when
// unset: one week.
const defaultDeletedFileRetention = 7 * 24 * time.Hour

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
		return defaultDeletedFileRetention, nil
	}
	d, err := ParseInterval(v)
	if err != nil {
		return 0, &PropertyError{Key: PropDeletedFileRetention, Reason: "the table's value is unusable: " + err.Error()}
	}
	return d, nil
}

// TableRetention, as VacuumConfig.Retain, keeps what the table's
// delta.deletedFileRetentionDuration says to keep.
const TableRetention time.Duration = -1

// VacuumConfig says what a vacuum may delete.
type VacuumConfig struct {
	// Retain keeps files removed less than Retain ago, and untracked files
	// younger than that. TableRetention (negative) means the table's
	// retention; zero keeps nothing and, like any value below the table's
	// floor, needs Force. Temporary files of killed writers are kept for
	// at least MinTempFileAge, whatever Retain.
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

// MinTempFileAge is the least age (since its last modification) at which
// a vacuum deletes a temporary file (see vacuumClassOf), whatever the
// retention, even a forced zero. A live writer keeps writing to its
// temporary file, which keeps it fresh, and publishes it once complete (a
// log file within a second of creating it), so one left unmodified for an
// hour belongs to a killed writer, while a younger one may belong to a
// live writer, which deleting it would make fail. A temporary file is
// never read, so keeping one longer only costs space.
const MinTempFileAge = time.Hour

// VacuumPlan lists the files a vacuum deletes.
type VacuumPlan struct {
	Version int64
	Retain  time.Duration
	Files   []FileInfo
	Bytes   int64
	// TempFiles is how many of Files are temporary files killed writers
	// left (data files, commits, checkpoints, _last_checkpoint).
	TempFiles int
	// Kept are the symbolic links found that are never deleted: to a
	// directory, to nothing or to a special file (FileInfo.Link says
	// which). An unreferenced link to a file is deleted like a file, and
	// its target is left alone.
	Kept []FileInfo
}

// PlanVacuum lists the files under the table that no longer belong to it:
// not referenced by the current snapshot (data files and their deletion
// vectors), not removed inside the retention window, and last modified
// before it (so in-flight writes are kept). _delta_log and other
// underscore- or dot-prefixed files and directories are never touched, except
// partition directories and the temporary files killed writers left (see
// vacuumClassOf), which go once older than both the retention and
// MinTempFileAge. Vacuum writes to the table, so the writer-side
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
	keep, err := referencedFiles(t.Store.TableRoot(), s, now.Add(-retain))
	if err != nil {
		return nil, err
	}
	files, err := t.Store.List(ctx, "", true)
	if err != nil {
		return nil, err
	}
	plan := &VacuumPlan{Version: s.Version, Retain: retain}
	cutoff, tempCutoff := now.Add(-retain), now.Add(-max(retain, MinTempFileAge))
	for _, f := range files {
		class := vacuumClassOf(f.Path, s.Metadata.PartitionColumns)
		if class != vacuumHidden && f.Link != "" && f.Link != linkFile {
			plan.Kept = append(plan.Kept, f)
			continue
		}
		switch class {
		case vacuumHidden:
			continue
		case vacuumTemp:
			if !f.ModTime.Before(tempCutoff) {
				continue
			}
			plan.TempFiles++
		default:
			if keep[f.Path] || !f.ModTime.Before(cutoff) {
				continue
			}
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

// referencedFiles is every path inside the table at root that the snapshot
// and the tombstones removed after cutoff still need, with their deletion
// vector files, in canonical form (Root.Canonical), as the table's listing
// names them. Paths outside the table are left out: a vacuum never lists,
// so never deletes, them. A tombstone without a deletionTimestamp counts as
// removed at time 0. A path that does not resolve is an error, so that a
// vacuum deletes nothing rather than a file it could not recognise.
func referencedFiles(root Root, s *Snapshot, cutoff time.Time) (map[string]bool, error) {
	keep := map[string]bool{}
	links := newLinkResolver(root)
	ref := func(c string, inside bool) {
		keep[c] = true // an outside path is absolute: no listed path matches it
		if rel, ok := links.rel(c, inside); ok {
			keep[rel] = true
		}
	}
	addRef := func(p string, dv *DeletionVector) error {
		c, inside, err := root.Canonical(p)
		if err != nil {
			return fmt.Errorf("vacuum: %w", err)
		}
		ref(c, inside)
		if dv != nil && dv.StorageType != "i" {
			dp, inside, err := dv.Path(root)
			if err != nil {
				return fmt.Errorf("vacuum: %w", err)
			}
			ref(dp, inside)
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

// vacuumClass is how a vacuum treats a file by its path.
type vacuumClass int

const (
	// vacuumData is a file the vacuum deletes once unreferenced and past
	// the retention.
	vacuumData vacuumClass = iota
	// vacuumHidden is a file the vacuum never touches.
	vacuumHidden
	// vacuumTemp is a temporary file a killed writer left, deleted once
	// past the retention and MinTempFileAge.
	vacuumTemp
)

// vacuumClassOf classifies the table-relative path p. A path with an
// element starting with '_' or '.' is hidden, except partition directories
// ("col=value") and temporary files: those of data files, and those of
// the log files geocompact writes directly under _delta_log (a commit, a
// checkpoint or _last_checkpoint; see isLogTempName). Committed log files
// and everything else under _delta_log are hidden.
func vacuumClassOf(p string, partitionCols []string) vacuumClass {
	dir, name := path.Split(p)
	if dir == LogDir+"/" {
		if isLogTempName(name) {
			return vacuumTemp
		}
		return vacuumHidden
	}
	for _, seg := range strings.Split(strings.TrimSuffix(dir, "/"), "/") {
		if hiddenName(seg) && !isPartitionDir(seg, partitionCols) {
			return vacuumHidden
		}
	}
	switch {
	case isTempName(name):
		return vacuumTemp
	case hiddenName(name):
		return vacuumHidden
	}
	return vacuumData
}

func hiddenName(name string) bool {
	return strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".")
}

func isPartitionDir(seg string, partitionCols []string) bool {
	for _, c := range partitionCols {
		if strings.HasPrefix(seg, c+"=") {
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
		if !insideRelative(f.Path) {
			return i, fmt.Errorf("delta: vacuum refuses to delete %q: not a path inside the table", f.Path)
		}
		if !mayDelete(t.Store, f.Path) {
			continue
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

// insideRelative reports whether p is a clean table-relative path, the only
// kind a vacuum deletes: a listing gives no other, and a plan built by hand
// must not reach outside the table.
func insideRelative(p string) bool {
	rel, inside, err := Root{}.Canonical(EncodePath(p))
	return err == nil && inside && rel == p
}

// isTempName reports whether name is a temporary file LocalStorage writes
// before publishing an object (".NAME.tmp-DIGITS", see Create and put).
func isTempName(name string) bool {
	_, ok := tempTarget(name)
	return ok
}

// tempTarget returns the name of the object the temporary file name was
// to publish, and whether name is one (".NAME.tmp-DIGITS").
func tempTarget(name string) (string, bool) {
	i := strings.LastIndex(name, ".tmp-")
	if !strings.HasPrefix(name, ".") || i <= 1 || i+len(".tmp-") == len(name) {
		return "", false
	}
	for _, c := range name[i+len(".tmp-"):] {
		if c < '0' || c > '9' {
			return "", false
		}
	}
	return name[1:i], true
}

// isLogTempName reports whether name, in _delta_log, is the temporary file
// of a log file geocompact writes there: a commit (put-if-absent), a
// classic or multi-part checkpoint, or _last_checkpoint. Other writers'
// temporary files, whose naming we do not know, are left alone.
func isLogTempName(name string) bool {
	target, ok := tempTarget(name)
	if !ok {
		return false
	}
	return target == path.Base(lastCheckpointName) || commitRe.MatchString(target) ||
		classicRe.MatchString(target) || multipartRe.MatchString(target)
}

// mayDelete checks again, just before a vacuum deletes it, that the
// planned path is neither a directory nor a link to anything but a file:
// the file system may have changed since the listing.
func mayDelete(st Storage, name string) bool {
	ls, ok := st.(*LocalStorage)
	if !ok {
		return true
	}
	p, err := ls.full(name)
	if err != nil {
		return false
	}
	info, err := os.Lstat(p)
	if err != nil {
		return true // gone already: deleting it is a no-op
	}
	if info.IsDir() {
		return false
	}
	k := linkKind(p, info.Mode())
	return k == "" || k == linkFile
}
