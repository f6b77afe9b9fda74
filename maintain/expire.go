package maintain

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/table/optval"
)

// ExpireConfig is one snapshot expiry, with Iceberg's expire_snapshots
// semantics: a snapshot is expired when it is older than OlderThan and not
// among the RetainLast newest of its branch, and is not referenced by a
// branch or tag. Build it from DefaultExpireConfig.
type ExpireConfig struct {
	// OlderThan is the age snapshots must exceed to expire (default 5d).
	// Below MinRetention it needs Force.
	OlderThan time.Duration
	// RetainLast is how many snapshots of each branch are kept whatever
	// their age (default 1, at least 1).
	RetainLast int
	// DryRun computes what would be expired and freed and changes nothing.
	DryRun bool
	// Force allows OlderThan below MinRetention.
	Force bool
	// DeleteOutsideLocation deletes the freed files that lie outside the
	// table location, such as files registered in place by add_files or
	// migrate. Without it they are kept and reported in
	// ExpireResult.Kept (Force does not change this).
	DeleteOutsideLocation bool
	// CommitRetries is the budget for commits that lose a race with another
	// writer (0 means 4, negative none).
	CommitRetries int
	// Logger receives one line per phase; nil discards.
	Logger *slog.Logger
}

// DefaultExpireConfig returns expire_snapshots' defaults: older than 5 days,
// retain the last 1.
func DefaultExpireConfig() ExpireConfig {
	return ExpireConfig{OlderThan: DefaultExpireOlderThan, RetainLast: DefaultRetainLast}
}

// Validate checks the config, including the retention floor.
func (c ExpireConfig) Validate() error {
	if c.RetainLast < 1 {
		return fmt.Errorf("%w: retain-last %d: want at least 1", optval.ErrBad, c.RetainLast)
	}
	if c.OlderThan < 0 {
		return fmt.Errorf("%w: older-than %s is negative", ErrDuration, c.OlderThan)
	}
	return CheckRetention("expire", c.OlderThan, c.Force)
}

// File kinds reported by expire and orphans.
const (
	KindData           = "data"
	KindPositionDelete = "position-delete"
	KindEqualityDelete = "equality-delete"
	KindManifest       = "manifest"
	KindManifestList   = "manifest-list"
	KindStatistics     = "statistics"
	KindOther          = "other"
)

// FreedFile is one file an expiry or orphan removal deletes.
type FreedFile struct {
	Path  string `json:"path"`
	Kind  string `json:"kind"`
	Bytes int64  `json:"bytes"`
}

// SnapshotInfo identifies one snapshot.
type SnapshotInfo struct {
	SnapshotID int64     `json:"snapshot_id"`
	Timestamp  time.Time `json:"timestamp"`
	Operation  string    `json:"operation"`
}

// HeldSnapshot is a snapshot an expiry would have expired by age that a
// ref keeps.
type HeldSnapshot struct {
	SnapshotID int64     `json:"snapshot_id"`
	Timestamp  time.Time `json:"timestamp"`
	Ref        string    `json:"ref"`
	RefType    string    `json:"ref_type"`
	// Reason says what the ref is and how it goes (for the maintain
	// lease tag: its holder and when it lapses).
	Reason string `json:"reason"`
}

// ExpireResult reports an expiry: the snapshots expired and the files
// freed, counted as Iceberg's expire_snapshots procedure counts them. On a
// dry run it reports what a real run would do.
type ExpireResult struct {
	Table      string        `json:"table"`
	OlderThan  time.Duration `json:"older_than_ns"`
	Cutoff     time.Time     `json:"cutoff"`
	RetainLast int           `json:"retain_last"`
	DryRun     bool          `json:"dry_run"`

	ExpiredSnapshots  []SnapshotInfo `json:"expired_snapshots"`
	RetainedSnapshots int            `json:"retained_snapshots"`
	// RemovedRefs are branches and tags dropped because they outlived
	// their max-ref-age-ms (never main).
	RemovedRefs []string `json:"removed_refs,omitempty"`
	// HeldByRefs are snapshots older than the cutoff that a branch or tag
	// other than main keeps, with why: such a snapshot, and the files it
	// reaches, stay until the ref goes.
	HeldByRefs []HeldSnapshot `json:"held_by_refs,omitempty"`
	// Files are the files reachable only from expired snapshots: never
	// from a retained snapshot, nor from any branch or tag. They are the
	// files deleted (on a dry run, those a real run would delete).
	Files []FreedFile `json:"files"`
	// Kept are files only expired snapshots reached that are not deleted,
	// with the reason: outside the table location (registered in place,
	// or reached through a symbolic link that leads out of it) unless
	// ExpireConfig.DeleteOutsideLocation, or a directory or a link to one.
	// They are in none of the counts below.
	Kept []KeptFile `json:"kept_files"`
	// KeptFilesCount is len(Kept).
	KeptFilesCount int `json:"kept_files_count"`

	DeletedDataFilesCount           int   `json:"deleted_data_files_count"`
	DeletedPositionDeleteFilesCount int   `json:"deleted_position_delete_files_count"`
	DeletedEqualityDeleteFilesCount int   `json:"deleted_equality_delete_files_count"`
	DeletedManifestFilesCount       int   `json:"deleted_manifest_files_count"`
	DeletedManifestListsCount       int   `json:"deleted_manifest_lists_count"`
	DeletedStatisticsFilesCount     int   `json:"deleted_statistics_files_count"`
	FreedBytes                      int64 `json:"freed_bytes"`
}

// Expire expires the snapshots of the table called name as cfg says and
// deletes the files only they reached (iceberg-go's ExpireSnapshots with
// its post-commit cleanup). The files are computed against the metadata
// the commit leaves, so a file a retained snapshot, branch or tag still
// references is never among them. A commit that loses a race is retried on
// a fresh load, up to cfg.CommitRetries.
func Expire(ctx context.Context, cat catalog.Catalog, name string, cfg ExpireConfig) (*ExpireResult, error) {
	cat = catalogs.Wrap(cat)
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	log := orDiscard(cfg.Logger)
	retries := catalogs.Spec{CommitRetries: cfg.CommitRetries}.Retries()
	var res *ExpireResult
	var loaded *table.Table
	err := catalogs.CommitRetried(ctx, cat, name, retries, func(ctx context.Context) (*table.Table, error) {
		tbl, err := catalogs.LoadTable(ctx, cat, name)
		if err != nil {
			return nil, err
		}
		loaded = tbl
		now := time.Now()
		tx := tbl.NewTransaction()
		// The files are deleted here, after the commit, from the list the
		// result reports, not by iceberg-go's post-commit cleanup, which
		// deletes files outside the table location too.
		if err := tx.ExpireSnapshots(table.WithOlderThan(cfg.OlderThan), table.WithRetainLast(cfg.RetainLast), table.WithPostCommit(false)); err != nil {
			return nil, fmt.Errorf("expire %s: %w", name, err)
		}
		staged, err := tx.StagedTable()
		if err != nil {
			return nil, fmt.Errorf("expire %s: %w", name, err)
		}
		res, err = planExpiry(ctx, tbl, staged.Metadata(), cfg.DeleteOutsideLocation)
		if err != nil {
			return nil, fmt.Errorf("expire %s: %w", name, err)
		}
		res.Table, res.OlderThan, res.Cutoff, res.RetainLast, res.DryRun = name, cfg.OlderThan, now.Add(-cfg.OlderThan).UTC(), cfg.RetainLast, cfg.DryRun
		res.HeldByRefs = heldByRefs(staged.Metadata(), res.Cutoff)
		if cfg.DryRun || (len(res.ExpiredSnapshots) == 0 && len(res.RemovedRefs) == 0) {
			return nil, nil
		}
		after, err := tx.Commit(ctx)
		if err != nil && !onlyNotExist(err) {
			if catalogs.IsRetryable(err) {
				return nil, err
			}
			return nil, fmt.Errorf("expire %s: %w (snapshots may be expired already; files left behind are removed by orphans)", name, err)
		}
		return after, nil
	})
	if err != nil {
		return nil, err
	}
	if !cfg.DryRun && len(res.Files) > 0 {
		if err := deleteFreed(ctx, loaded, res.Files, cfg.DeleteOutsideLocation); err != nil {
			return nil, fmt.Errorf("expire %s: snapshots expired, but deleting their files failed: %w (files left behind are removed by orphans)", name, err)
		}
	}
	if len(res.Kept) > 0 {
		log.Warn("expire kept files", "table", name, "kept_files", len(res.Kept), "first", res.Kept[0].Path, "reason", res.Kept[0].Reason)
	}
	log.Info("expire done", "table", name, "expired_snapshots", len(res.ExpiredSnapshots), "files", len(res.Files), "bytes", res.FreedBytes, "dry_run", cfg.DryRun)
	return res, nil
}

// heldByRefs lists the snapshots of meta older than cutoff that a ref
// other than main points at, oldest first.
func heldByRefs(meta table.Metadata, cutoff time.Time) []HeldSnapshot {
	var out []HeldSnapshot
	for name, ref := range meta.Refs() {
		if name == table.MainBranch {
			continue
		}
		s := meta.SnapshotByID(ref.SnapshotID)
		if s == nil || !time.UnixMilli(s.TimestampMs).Before(cutoff) {
			continue
		}
		h := HeldSnapshot{SnapshotID: s.SnapshotID, Timestamp: time.UnixMilli(s.TimestampMs).UTC(), Ref: name, RefType: string(ref.SnapshotRefType)}
		h.Reason = fmt.Sprintf("the %s %s points at it; it stays until the %s is removed", h.RefType, name, h.RefType)
		if name == LeaseRef {
			h.Reason = leaseReason(meta.Properties())
		}
		out = append(out, h)
	}
	slices.SortFunc(out, func(a, b HeldSnapshot) int { return cmp.Compare(a.Timestamp.UnixMilli(), b.Timestamp.UnixMilli()) })
	return out
}

// leaseReason says why the maintain lease tag keeps a snapshot: a running
// maintain holds it, or a run that was killed left it; it lapses at its
// expiry, and the next maintain run then removes it.
func leaseReason(props iceberg.Properties) string {
	owner := props[PropLeaseOwner]
	if owner == "" {
		owner = "an unknown run"
	}
	lapse := "at an unknown time"
	if ms, err := strconv.ParseInt(props[PropLeaseExpiresMs], 10, 64); err == nil {
		lapse = "at " + time.UnixMilli(ms).UTC().Format(time.RFC3339)
	}
	return fmt.Sprintf("the maintain lease tag %s points at it: held by %s (a running maintain, or one that was killed); "+
		"it lapses %s, and the next maintain run removes it", LeaseRef, owner, lapse)
}

// planExpiry compares the table's metadata before and after expiry and
// lists what the expiry frees: the manifest lists and statistics files of
// expired snapshots, and the manifests and content files they reach that
// no retained snapshot reaches. It is the rule iceberg-go's post-commit
// cleanup applies, computed without deleting anything.
func planExpiry(ctx context.Context, tbl *table.Table, after table.Metadata, outsideOK bool) (*ExpireResult, error) {
	before := tbl.Metadata()
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	kept := map[int64]bool{}
	for _, s := range after.Snapshots() {
		kept[s.SnapshotID] = true
	}
	// Every ref left must point at a kept snapshot; iceberg-go promises
	// this, and the files of a ref's snapshot are never freed.
	for ref, r := range after.Refs() {
		if !kept[r.SnapshotID] {
			return nil, fmt.Errorf("ref %q would point at expired snapshot %d; refusing", ref, r.SnapshotID)
		}
	}
	res := &ExpireResult{RetainedSnapshots: len(kept), ExpiredSnapshots: []SnapshotInfo{}, Files: []FreedFile{}}
	for ref := range before.Refs() {
		if !hasRef(after, ref) {
			res.RemovedRefs = append(res.RemovedRefs, ref)
		}
	}
	slices.Sort(res.RemovedRefs)
	r, err := retainedFiles(fs, after)
	if err != nil {
		return nil, err
	}
	fr := &freedFiles{fs: fs, retained: r, files: map[string]FreedFile{}, visited: map[string]bool{}}
	expired := map[int64]bool{}
	for _, s := range before.Snapshots() {
		if kept[s.SnapshotID] {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		expired[s.SnapshotID] = true
		op := ""
		if s.Summary != nil {
			op = string(s.Summary.Operation)
		}
		res.ExpiredSnapshots = append(res.ExpiredSnapshots, SnapshotInfo{SnapshotID: s.SnapshotID, Timestamp: time.UnixMilli(s.TimestampMs).UTC(), Operation: op})
		if err := fr.addSnapshot(s); err != nil {
			return nil, err
		}
	}
	fr.addStatistics(before, expired)
	res.Kept = []KeptFile{}
	root := newTableRoot(tbl.Location())
	for _, p := range slices.Sorted(maps.Keys(fr.files)) {
		f := fr.files[p]
		if why := root.keep(p, outsideOK); why != "" {
			res.Kept = append(res.Kept, KeptFile{Path: p, Kind: f.Kind, Bytes: f.Bytes, Reason: why})
			delete(fr.files, p)
		}
	}
	res.KeptFilesCount = len(res.Kept)
	res.count(fr.files)
	return res, nil
}

// deleteFreed deletes the files an expiry freed, checking each again
// against the table location just before the removals, deleteWorkers at a
// time (an object store answers each delete in a round trip). A file
// already gone is not an error.
func deleteFreed(ctx context.Context, tbl *table.Table, files []FreedFile, outsideOK bool) error {
	fs, err := tbl.FS(ctx)
	if err != nil {
		return err
	}
	root := newTableRoot(tbl.Location())
	var errs []error
	todo := make(chan string)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range deleteWorkers {
		wg.Go(func() {
			for p := range todo {
				if err := fs.Remove(p); err != nil && !errors.Is(err, iofs.ErrNotExist) {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		})
	}
	for _, f := range files {
		if ctx.Err() != nil {
			break
		}
		if why := root.keep(f.Path, outsideOK); why != "" {
			mu.Lock()
			errs = append(errs, fmt.Errorf("kept %s: %s", f.Path, why))
			mu.Unlock()
			continue
		}
		todo <- f.Path
	}
	close(todo)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// deleteWorkers is how many removals an expiry runs at once.
const deleteWorkers = 8

// retained is what the snapshots an expiry keeps reach: their manifests,
// and their manifest lists, live entries' files and statistics files.
type retained struct {
	manifests, files map[string]bool
}

func retainedFiles(fs iceio.IO, after table.Metadata) (retained, error) {
	r := retained{manifests: map[string]bool{}, files: map[string]bool{}}
	for _, s := range after.Snapshots() {
		r.files[s.ManifestList] = true
		mans, err := s.Manifests(fs)
		if err != nil {
			return r, fmt.Errorf("read manifest list of retained snapshot %d: %w", s.SnapshotID, err)
		}
		for _, m := range mans {
			if r.manifests[m.FilePath()] {
				continue
			}
			r.manifests[m.FilePath()] = true
			for e, err := range m.Entries(fs, true) {
				if err != nil {
					return r, fmt.Errorf("read manifest %s: %w", m.FilePath(), err)
				}
				r.files[e.DataFile().FilePath()] = true
			}
		}
	}
	for sf := range after.Statistics() {
		r.files[sf.StatisticsPath] = true
	}
	for sf := range after.PartitionStatistics() {
		r.files[sf.StatisticsPath] = true
	}
	return r, nil
}

// freedFiles collects the files expired snapshots reach and retained ones
// do not.
type freedFiles struct {
	fs       iceio.IO
	retained retained
	files    map[string]FreedFile
	visited  map[string]bool // manifests already listed
}

func (fr *freedFiles) add(f FreedFile) {
	if f.Path == "" || fr.retained.files[f.Path] || fr.retained.manifests[f.Path] {
		return
	}
	fr.files[f.Path] = f
}

// addSnapshot adds an expired snapshot's manifest list, and the manifests
// and content files it reaches.
func (fr *freedFiles) addSnapshot(s table.Snapshot) error {
	fr.add(FreedFile{Path: s.ManifestList, Kind: KindManifestList, Bytes: statSize(fr.fs, s.ManifestList)})
	mans, err := s.Manifests(fr.fs)
	if err != nil {
		return fmt.Errorf("read manifest list of snapshot %d: %w", s.SnapshotID, err)
	}
	for _, m := range mans {
		if fr.retained.manifests[m.FilePath()] || fr.visited[m.FilePath()] {
			continue
		}
		fr.visited[m.FilePath()] = true
		fr.add(FreedFile{Path: m.FilePath(), Kind: KindManifest, Bytes: m.Length()})
		for e, err := range m.Entries(fr.fs, false) {
			if err != nil {
				return fmt.Errorf("read manifest %s: %w", m.FilePath(), err)
			}
			df := e.DataFile()
			fr.add(FreedFile{Path: df.FilePath(), Kind: contentKind(df.ContentType()), Bytes: df.FileSizeBytes()})
		}
	}
	return nil
}

// addStatistics adds the statistics files of expired snapshots.
func (fr *freedFiles) addStatistics(before table.Metadata, expired map[int64]bool) {
	for sf := range before.Statistics() {
		if expired[sf.SnapshotID] {
			fr.add(FreedFile{Path: sf.StatisticsPath, Kind: KindStatistics, Bytes: sf.FileSizeInBytes})
		}
	}
	for sf := range before.PartitionStatistics() {
		if expired[sf.SnapshotID] {
			fr.add(FreedFile{Path: sf.StatisticsPath, Kind: KindStatistics, Bytes: sf.FileSizeInBytes})
		}
	}
}

// count lists freed in path order and totals it by kind.
func (res *ExpireResult) count(freed map[string]FreedFile) {
	for _, p := range slices.Sorted(maps.Keys(freed)) {
		f := freed[p]
		res.Files = append(res.Files, f)
		res.FreedBytes += f.Bytes
		switch f.Kind {
		case KindData:
			res.DeletedDataFilesCount++
		case KindPositionDelete:
			res.DeletedPositionDeleteFilesCount++
		case KindEqualityDelete:
			res.DeletedEqualityDeleteFilesCount++
		case KindManifest:
			res.DeletedManifestFilesCount++
		case KindManifestList:
			res.DeletedManifestListsCount++
		case KindStatistics:
			res.DeletedStatisticsFilesCount++
		}
	}
}

func hasRef(m table.Metadata, name string) bool {
	for r := range m.Refs() {
		if r == name {
			return true
		}
	}
	return false
}

func contentKind(c iceberg.ManifestEntryContent) string {
	switch c {
	case iceberg.EntryContentPosDeletes:
		return KindPositionDelete
	case iceberg.EntryContentEqDeletes:
		return KindEqualityDelete
	}
	return KindData
}

// statSize returns the size of the file at path, or 0 when it cannot be
// read (a manifest list already gone frees nothing more).
func statSize(fs iceio.IO, path string) int64 {
	f, err := fs.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0
	}
	return st.Size()
}
