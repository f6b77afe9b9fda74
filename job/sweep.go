package job

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	stdfs "io/fs"
	"path"
	"strings"

	"github.com/apache/iceberg-go/catalog"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/geocompact/geocompact/table/catalogs"
)

// A job's marker is the job itself, written beside the table's metadata
// by the driver before its workers start and removed when the driver is
// done (committed, or aborted and cleaned up). A marker that stays says
// that a driver stopped before it was done (killed, or its machine lost):
// Sweep finds it and removes what that job left.
const markerPrefix, markerSuffix = "geocompact-job-", ".plan.json"

// MarkerPath is where the marker of the job with id goes under a table
// location.
func MarkerPath(location, id string) string {
	return strings.TrimSuffix(location, "/") + "/metadata/" + markerPrefix + id + markerSuffix
}

// ResultPath is where a distributed engine leaves the result of the job
// with id under a table location, for its driver to read.
func ResultPath(location, id string) string {
	return strings.TrimSuffix(location, "/") + "/metadata/" + markerPrefix + id + ".json"
}

// WriteMarker writes the job's marker (see MarkerPath).
func (j *Rewrite) WriteMarker(ctx context.Context) error {
	loc, fs, err := j.Storage(ctx)
	if err != nil {
		return err
	}
	w, ok := fs.(icebergio.WriteFileIO)
	if !ok {
		return fmt.Errorf("job %s: the table's file system cannot write files", j.ID)
	}
	b, err := json.Marshal(j)
	if err != nil {
		return fmt.Errorf("encode job %s: %w", j.ID, err)
	}
	if err := w.WriteFile(MarkerPath(loc, j.ID), b); err != nil {
		return fmt.Errorf("write marker of job %s: %w", j.ID, err)
	}
	return nil
}

// RemoveMarker removes the job's marker and its result file, if any.
func (j *Rewrite) RemoveMarker(ctx context.Context) error {
	loc, fs, err := j.Storage(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, p := range []string{ResultPath(loc, j.ID), MarkerPath(loc, j.ID)} {
		if err := fs.Remove(p); err != nil && !isNotExist(err) {
			errs = append(errs, fmt.Errorf("remove %s: %w", p, err))
		}
	}
	return errors.Join(errs...)
}

// Sweep removes what jobs on the table called name left when their
// drivers stopped before they were done: every file carrying such a job's
// tag that no table metadata references, its result file and its marker.
// It sweeps a job only when none of its groups can commit any more, that
// is when every group has an input file that the current snapshot no
// longer holds (replaced by another rewrite, or by the job's own commit
// before its driver stopped): the replace validation would fail any
// commit of such a job, so its files are garbage whether its driver still
// runs or not. A job that could still commit is left alone. The job with
// id keep (the caller's own) is never swept. It returns the paths it
// deleted.
func Sweep(ctx context.Context, cat catalog.Catalog, name, keep string) ([]string, error) {
	tbl, err := catalogs.LoadTable(ctx, catalogs.Wrap(cat), name)
	if err != nil {
		return nil, err
	}
	if none, err := noMarkers(ctx, tbl, keep); err != nil || none {
		return nil, err
	}
	plan, err := tbl.PlanOrphanFiles(ctx, table.WithFilesOlderThan(0))
	if err != nil {
		return nil, fmt.Errorf("sweep %s: list files: %w", name, err)
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, fmt.Errorf("sweep %s: %w", name, err)
	}
	var markers []string
	for _, f := range plan.OrphanFiles() {
		base := path.Base(f.Path)
		if strings.HasPrefix(base, markerPrefix) && strings.HasSuffix(base, markerSuffix) {
			markers = append(markers, f.Path)
		}
	}
	if len(markers) == 0 {
		return nil, nil
	}
	live, err := liveFiles(ctx, tbl)
	if err != nil {
		return nil, fmt.Errorf("sweep %s: %w", name, err)
	}
	var deleted []string
	for _, m := range markers {
		j, err := readMarker(fs, m)
		if err != nil {
			return deleted, fmt.Errorf("sweep %s: %w", name, err)
		}
		if j.ID == keep || canCommit(j, live) {
			continue
		}
		var doomed []string
		for _, f := range plan.OrphanFiles() {
			if base := path.Base(f.Path); strings.Contains(base, j.Tag()) || base == path.Base(ResultPath("", j.ID)) {
				doomed = append(doomed, f.Path)
			}
		}
		doomed = append(doomed, m) // the marker last: a failed sweep is retried by the next
		for _, p := range doomed {
			if err := fs.Remove(p); err != nil && !isNotExist(err) {
				return deleted, fmt.Errorf("sweep %s: delete %s: %w", name, p, err)
			}
			deleted = append(deleted, p)
		}
	}
	return deleted, nil
}

// noMarkers reports whether the table's metadata folder holds no marker
// but keep's, by listing that folder alone: the usual case, which then
// spares reading every snapshot's manifests to plan orphans. It reports
// false when the file system cannot list.
func noMarkers(ctx context.Context, tbl *table.Table, keep string) (bool, error) {
	fs, err := tbl.FS(ctx)
	if err != nil {
		return false, fmt.Errorf("sweep %s: %w", tbl.Identifier(), err)
	}
	lister, ok := fs.(icebergio.ListableIO)
	if !ok {
		return false, nil
	}
	dir := strings.TrimSuffix(tbl.Location(), "/") + "/metadata"
	found := false
	err = lister.WalkDir(dir, func(p string, d stdfs.DirEntry, err error) error {
		if err != nil {
			if isNotExist(err) {
				return nil
			}
			return err
		}
		if d.IsDir() && p != dir && !strings.HasSuffix(p, "/metadata") {
			return stdfs.SkipDir
		}
		base := path.Base(p)
		if strings.HasPrefix(base, markerPrefix) && strings.HasSuffix(base, markerSuffix) && base != markerPrefix+keep+markerSuffix {
			found = true
			return stdfs.SkipAll
		}
		return nil
	})
	if err != nil {
		return false, nil // list as orphan planning does
	}
	return !found, nil
}

// canCommit reports whether some group of j still has all its input files
// in the current snapshot.
func canCommit(j *Rewrite, live map[string]bool) bool {
	for _, g := range j.Groups {
		all := true
		for _, f := range g.Files {
			if !live[f] {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}

// liveFiles returns the paths of the data files of tbl's current snapshot.
func liveFiles(ctx context.Context, tbl *table.Table) (map[string]bool, error) {
	live := map[string]bool{}
	if tbl.CurrentSnapshot() == nil {
		return live, nil
	}
	tasks, err := catalogs.PlanFiles(ctx, tbl.Scan())
	if err != nil {
		return nil, fmt.Errorf("list live files: %w", err)
	}
	for _, t := range tasks {
		live[t.File.FilePath()] = true
	}
	return live, nil
}

func readMarker(fs icebergio.IO, p string) (*Rewrite, error) {
	f, err := fs.Open(p)
	if err != nil {
		return nil, fmt.Errorf("read job marker %s: %w", p, err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("read job marker %s: %w", p, err)
	}
	var j Rewrite
	if err := json.Unmarshal(b, &j); err != nil {
		return nil, fmt.Errorf("decode job marker %s: %w", p, err)
	}
	if want := markerPrefix + j.ID + markerSuffix; path.Base(p) != want {
		return nil, fmt.Errorf("job marker %s names job %q", p, j.ID)
	}
	return &j, nil
}

func isNotExist(err error) bool {
	return errors.Is(err, stdfs.ErrNotExist)
}

// Load reads the marker of the job with id on the table called name: a
// driver, or a worker, that knows only the job's id finds the job there
// while the job runs.
func Load(ctx context.Context, cat catalog.Catalog, name, id string) (*Rewrite, error) {
	tbl, err := catalogs.LoadTable(ctx, catalogs.Wrap(cat), name)
	if err != nil {
		return nil, err
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, fmt.Errorf("load job %s: %w", id, err)
	}
	return readMarker(fs, MarkerPath(tbl.Location(), id))
}
