package maintain

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net/url"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/geocompact/geocompact/table/catalogs"
)

// OrphansConfig is one orphan file removal. Build it from
// DefaultOrphansConfig.
type OrphansConfig struct {
	// OlderThan: unreferenced files younger than this are kept, as they may
	// belong to a writer that has not committed yet (default 3d). Below
	// MinRetention it needs Force.
	OlderThan time.Duration
	// DryRun lists what would be removed and removes nothing.
	DryRun bool
	// Force allows OlderThan below MinRetention.
	Force bool
	// Location, when set, is the directory listed instead of the whole
	// table location (remove_orphan_files' location); it must be the table
	// location or lie below it.
	Location string
	// Logger receives one line per phase; nil discards.
	Logger *slog.Logger
}

// DefaultOrphansConfig returns remove_orphan_files' default: older than 3
// days.
func DefaultOrphansConfig() OrphansConfig {
	return OrphansConfig{OlderThan: DefaultOrphansOlderThan}
}

// Validate checks the config, including the retention floor.
func (c OrphansConfig) Validate() error {
	if c.OlderThan < 0 {
		return fmt.Errorf("%w: older-than %s is negative", ErrDuration, c.OlderThan)
	}
	return CheckRetention("orphans", c.OlderThan, c.Force)
}

// OrphansResult reports an orphan removal (or, on a dry run, what one would
// remove).
type OrphansResult struct {
	Table string `json:"table"`
	// Location is the table location; nothing outside it is listed or
	// removed.
	Location  string        `json:"location"`
	OlderThan time.Duration `json:"older_than_ns"`
	Cutoff    time.Time     `json:"cutoff"`
	DryRun    bool          `json:"dry_run"`
	// Files are the unreferenced files older than the cutoff.
	Files []FreedFile `json:"files"`
	// Bytes is the total size of Files.
	Bytes int64 `json:"bytes"`
	// Kept are unreferenced files found and not deleted, with the reason:
	// a directory, or a symbolic link to a directory, to nothing or to a
	// special file. A link is never followed; an unreferenced link to a
	// file is in Files, and removing it leaves its target alone.
	Kept []KeptFile `json:"kept_files"`
	// KeptFilesCount is len(Kept).
	KeptFilesCount int `json:"kept_files_count"`
}

// RemoveOrphans deletes the files under the table location that no
// metadata of the table references (no snapshot, manifest, metadata file
// in the log, statistics file) and that are older than cfg.OlderThan. It
// wraps iceberg-go's orphan planning and adds guards: every file it
// deletes must lie under the table location, through symbolic links
// resolved, else nothing is deleted; directories and links to anything
// but a file are kept and reported. A location that is itself a link is
// listed through it.
func RemoveOrphans(ctx context.Context, cat catalog.Catalog, name string, cfg OrphansConfig) (*OrphansResult, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	log := orDiscard(cfg.Logger)
	tbl, err := catalogs.LoadTable(ctx, cat, name)
	if err != nil {
		return nil, err
	}
	loc := tbl.Location()
	root := newTableRoot(loc)
	scanLoc := loc
	if cfg.Location != "" {
		if !root.containsDir(cfg.Location) {
			return nil, fmt.Errorf("orphans %s: location %s is outside the table location %s; only files under it are ever removed", name, cfg.Location, loc)
		}
		scanLoc = cfg.Location
	}
	scan := []table.OrphanCleanupOption{table.WithFilesOlderThan(cfg.OlderThan)}
	if root.local != "" {
		// The trailing separator makes the listing enter a location that
		// is itself a symbolic link; links below it are never followed.
		scan = append(scan, table.WithLocation(strings.TrimSuffix(scanLoc, "/")+"/"))
	} else if cfg.Location != "" {
		scan = append(scan, table.WithLocation(cfg.Location))
	}
	plan, err := tbl.PlanOrphanFiles(ctx, scan...)
	if err != nil {
		return nil, fmt.Errorf("orphans %s: %w", name, err)
	}
	var planned []string
	for _, f := range plan.OrphanFiles() {
		planned = append(planned, f.Path)
	}
	checksums := liveChecksums(planned)
	if root.local != "" {
		live, err := liveLocalFiles(ctx, tbl, planned)
		if err != nil {
			return nil, fmt.Errorf("orphans %s: %w", name, err)
		}
		maps.Copy(checksums, live)
	}
	res, err := orphansResult(name, root, cfg, plan, checksums)
	if err != nil {
		return nil, err
	}
	if len(res.Kept) > 0 {
		log.Warn("orphans kept files", "table", name, "kept_files", len(res.Kept), "first", res.Kept[0].Path, "reason", res.Kept[0].Reason)
	}
	if cfg.DryRun || len(res.Files) == 0 {
		log.Info("orphans planned", "table", name, "files", len(res.Files), "bytes", res.Bytes, "dry_run", cfg.DryRun)
		return res, nil
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, fmt.Errorf("orphans %s: %w", name, err)
	}
	kept := map[string]bool{}
	for _, k := range res.Kept {
		kept[k.Path] = true
	}
	// Checked again at the removal: the plan is a listing, and the file
	// system may have changed since.
	guarded := func(p string) error {
		if !root.contains(p) {
			return fmt.Errorf("refusing to delete %s: outside the table location %s", p, loc)
		}
		if kept[p] || checksums[p] || root.keepReason(p) != "" {
			return nil
		}
		return fs.Remove(p)
	}
	if _, err := tbl.ExecuteOrphanCleanup(ctx, plan, table.WithDeleteFunc(guarded)); err != nil {
		return res, fmt.Errorf("orphans %s: %w", name, err)
	}
	log.Info("orphans removed", "table", name, "files", len(res.Files), "bytes", res.Bytes)
	return res, nil
}

// orphansResult turns a plan into the result: the files to delete, and
// those kept (directories and links to anything but a file). A planned
// file outside the table location refuses the whole run. The checksums of
// live files (liveChecksums) are neither deleted nor listed.
func orphansResult(name string, root *tableRoot, cfg OrphansConfig, plan table.OrphanCleanupPlan, checksums map[string]bool) (*OrphansResult, error) {
	res := &OrphansResult{Table: name, Location: root.loc, OlderThan: cfg.OlderThan, Cutoff: plan.Cutoff().UTC(), DryRun: cfg.DryRun,
		Files: []FreedFile{}, Kept: []KeptFile{}}
	for _, f := range plan.OrphanFiles() {
		if checksums[f.Path] {
			continue
		}
		if !root.contains(f.Path) {
			return nil, fmt.Errorf("orphans %s: planned file %s is outside the table location %s; refusing to delete anything", name, f.Path, root.loc)
		}
		if why := root.keepReason(f.Path); why != "" {
			res.Kept = append(res.Kept, KeptFile{Path: f.Path, Kind: KindOther, Bytes: f.SizeBytes, Reason: why})
			continue
		}
		res.Files = append(res.Files, FreedFile{Path: f.Path, Kind: guessKind(f.Path), Bytes: f.SizeBytes})
		res.Bytes += f.SizeBytes
	}
	slices.SortFunc(res.Files, func(a, b FreedFile) int { return strings.Compare(a.Path, b.Path) })
	slices.SortFunc(res.Kept, func(a, b KeptFile) int { return strings.Compare(a.Path, b.Path) })
	res.KeptFilesCount = len(res.Kept)
	return res, nil
}

// liveLocalFiles returns the planned local files that tbl references
// after all: iceberg-go matches a reference to a listed file by decoding
// its file: URI, while the file IO maps it literally (localFSPath), so a
// data file in the partition directory "region=a%2Fb" would look
// unreferenced. A planned file is live when its local path is the one a
// referenced file maps to, either way.
func liveLocalFiles(ctx context.Context, tbl *table.Table, planned []string) (map[string]bool, error) {
	live := map[string]bool{}
	if len(planned) == 0 {
		return live, nil
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	ret, err := retainedFiles(fs, tbl.Metadata())
	if err != nil {
		return nil, err
	}
	local := map[string]bool{}
	add := func(p string) {
		if lp, ok := localFSPath(p); ok {
			local[filepath.Clean(lp)] = true
		}
		if lp, ok := decodedPath(p); ok {
			local[filepath.Clean(lp)] = true
		}
	}
	add(tbl.MetadataLocation())
	for e := range tbl.Metadata().PreviousFiles() {
		add(e.MetadataFile)
	}
	for p := range ret.files {
		add(p)
	}
	for p := range ret.manifests {
		add(p)
	}
	for _, p := range planned {
		if lp, ok := localFSPath(p); ok && local[filepath.Clean(lp)] {
			live[p] = true
		}
	}
	return live, nil
}

// decodedPath is the local path of the file: URI name percent-decoded
// once, as earlier versions opened it and iceberg-go matches references.
func decodedPath(name string) (string, bool) {
	if !strings.HasPrefix(strings.ToLower(name), "file:") {
		return "", false
	}
	u, err := url.Parse(name)
	if err != nil || u.Path == "" {
		return "", false
	}
	return filepath.FromSlash(u.Path), true
}

// liveChecksums returns the planned files that are Hadoop checksum files
// (".NAME.crc", which Hadoop's local file system, and so Spark, writes
// beside every file) of a NAME that is not planned itself: NAME is live,
// and its checksum is kept with it. The checksum of an orphan goes with
// it.
func liveChecksums(planned []string) map[string]bool {
	orphan := make(map[string]bool, len(planned))
	for _, p := range planned {
		orphan[p] = true
	}
	keep := map[string]bool{}
	for _, p := range planned {
		dir, base := path.Split(p)
		if len(base) > len("..crc") && strings.HasPrefix(base, ".") && strings.HasSuffix(base, ".crc") &&
			!orphan[dir+strings.TrimSuffix(base[1:], ".crc")] {
			keep[p] = true
		}
	}
	return keep
}

// underLocation reports whether p names a file strictly below the
// directory loc. Both are compared as cleaned URI paths with the same
// scheme and authority, so "t2/x" is not under "t" and "t/../u" is not
// under "t".
func underLocation(p, loc string) bool {
	pu, err1 := url.Parse(p)
	lu, err2 := url.Parse(loc)
	if err1 != nil || err2 != nil {
		return false
	}
	if pu.Scheme == "" {
		pu.Scheme = "file"
	}
	if lu.Scheme == "" {
		lu.Scheme = "file"
	}
	if pu.Scheme != lu.Scheme || pu.Host != lu.Host {
		return false
	}
	pp, lp := path.Clean("/"+pu.Path), path.Clean("/"+lu.Path)
	return strings.HasPrefix(pp, strings.TrimSuffix(lp, "/")+"/")
}

// guessKind names a file's kind from its name, for orphan listings.
func guessKind(p string) string {
	base := path.Base(p)
	switch {
	case strings.HasSuffix(base, ".parquet") || strings.HasSuffix(base, ".orc") || strings.HasSuffix(base, ".avro") && !strings.Contains(p, "/metadata/"):
		return KindData
	case strings.HasPrefix(base, "snap-") && strings.HasSuffix(base, ".avro"):
		return KindManifestList
	case strings.HasSuffix(base, ".avro"):
		return KindManifest
	case strings.HasSuffix(base, ".puffin") || strings.HasSuffix(base, ".stats"):
		return KindStatistics
	}
	return KindOther
}
