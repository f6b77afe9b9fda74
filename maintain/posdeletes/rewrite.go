// Package posdeletes rewrites an Iceberg table's position delete files as
// Iceberg's rewrite_position_delete_files procedure does: the position
// delete files of a partition are merged toward a target size, positions
// that point at data files no longer live are dropped, and files that
// delete nothing any more are removed. On a v3 table the position delete
// files are turned into deletion vectors, one per data file, merged with
// the vector a data file already has. Data files are never touched, and
// no live row's visibility changes.
package posdeletes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	format "github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/table/geowrite"
)

// Config is one delete file rewrite.
type Config struct {
	// Where limits the rewrite to the delete files that apply to data
	// files the predicate may match.
	Where string
	// Options are Iceberg's options by name (see ParseOptions).
	Options map[string]string
	// DryRun plans and reports, and writes nothing.
	DryRun bool
	// CommitRetries is the budget for commits that lose a race with
	// another writer (0 means 4, negative none).
	CommitRetries int
	// Logger receives one line per phase; nil discards.
	Logger *slog.Logger
	// BeforeCommit, when set, runs before each commit attempt (a seam
	// for tests that race a second writer).
	BeforeCommit func(ctx context.Context)
}

// Result reports a delete file rewrite by Iceberg's result columns, and
// what it dropped.
type Result struct {
	Table string `json:"table"`
	// RewrittenDeleteFilesCount, AddedDeleteFilesCount,
	// RewrittenBytesCount and AddedBytesCount keep Iceberg's names; a
	// deletion vector counts as one file and its blob's bytes.
	RewrittenDeleteFilesCount int   `json:"rewritten_delete_files_count"`
	AddedDeleteFilesCount     int   `json:"added_delete_files_count"`
	RewrittenBytesCount       int64 `json:"rewritten_bytes_count"`
	AddedBytesCount           int64 `json:"added_bytes_count"`
	// Groups is how many groups were rewritten (or would be).
	Groups int `json:"groups"`
	// DeletesKept counts the positions the new files hold; DanglingDropped
	// those dropped because they delete nothing a reader sees: their data
	// file is gone, or has a deletion vector that holds its deletes.
	DeletesKept     int64 `json:"deletes_kept"`
	DanglingDropped int64 `json:"dangling_deletes_dropped"`
	// DeletionVectors says the new files are deletion vectors (a v3 table).
	DeletionVectors bool `json:"deletion_vectors"`
	// SnapshotIDs are the replace snapshots committed, one per commit.
	SnapshotIDs []int64 `json:"snapshot_ids,omitempty"`
	DryRun      bool    `json:"dry_run"`
	// NoopReason says why nothing was rewritten; empty when something was.
	NoopReason string `json:"noop_reason,omitempty"`
}

// SnapshotID is the last snapshot committed; 0 when none was.
func (r *Result) SnapshotID() int64 {
	if len(r.SnapshotIDs) == 0 {
		return 0
	}
	return r.SnapshotIDs[len(r.SnapshotIDs)-1]
}

// ErrUnsupported marks a table form a delete file rewrite refuses, by
// name, before it writes anything.
var ErrUnsupported = errors.New("rewrite_position_delete_files")

// SummaryOperation is the snapshot summary key its commits carry.
const SummaryOperation = "geocompact.operation"

// Rewrite rewrites the position delete files of the table called name in
// cat. Every group is read, written, read back and checked against what
// it read before anything is committed; a failure or cancellation
// deletes what was written and commits nothing (with partial progress,
// the commits already made stay). A concurrent commit that removed a
// delete file being rewritten, or changed the deletion vector of a data
// file being given one, fails it with catalogs.ErrConflict.
func Rewrite(ctx context.Context, cat catalog.Catalog, name string, cfg Config) (*Result, error) {
	cat = catalogs.Wrap(cat)
	r := &run{cat: cat, name: name, cfg: cfg, log: cfg.Logger}
	if r.log == nil {
		r.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	tbl, err := catalogs.LoadTable(ctx, cat, name)
	if err != nil {
		return nil, err
	}
	r.tbl = tbl
	if r.opts, err = ParseOptions(cfg.Options, tbl.Properties()); err != nil {
		return nil, err
	}
	res := &Result{Table: name, DryRun: cfg.DryRun, DeletionVectors: tbl.Metadata().Version() >= 3}
	if r.st, err = readState(ctx, tbl); err != nil {
		return nil, fmt.Errorf("rewrite position deletes of %s: %w", name, err)
	}
	if r.st.snapshotID == 0 {
		res.NoopReason = "the table has no snapshot"
		return res, nil
	}
	if err := r.st.selectWhere(ctx, tbl, cfg.Where); err != nil {
		return nil, err
	}
	groups := r.st.plan(tbl.Metadata(), r.opts, res.DeletionVectors)
	if err := r.refuse(groups, res.DeletionVectors); err != nil {
		return nil, err
	}
	if len(groups) == 0 {
		res.NoopReason = r.noop()
		return res, nil
	}
	res.Groups = len(groups)
	if cfg.DryRun {
		for _, g := range groups {
			res.RewrittenDeleteFilesCount += len(g.files)
			res.RewrittenBytesCount += g.bytes()
		}
		return res, nil
	}
	for _, batch := range r.batches(groups) {
		if err := r.rewriteBatch(ctx, batch, res); err != nil {
			return res, err
		}
	}
	r.log.Info("rewrite position deletes done", "table", name, "rewritten", res.RewrittenDeleteFilesCount, "added", res.AddedDeleteFilesCount)
	return res, nil
}

// run is one Rewrite.
type run struct {
	cat  catalog.Catalog
	name string
	cfg  Config
	log  *slog.Logger
	tbl  *table.Table
	opts Options
	st   *state
}

func (r *run) noop() string {
	switch {
	case len(r.st.files) == 0 && r.cfg.Where != "":
		return "no position delete file applies to data the where predicate matches"
	case len(r.st.files) == 0:
		return "the table has no position delete files"
	}
	return fmt.Sprintf("no partition has enough small position delete files to rewrite (min-input-files=%d, min-file-size-bytes=%d); pass --option rewrite-all=true to rewrite them all", r.opts.MinInputFiles, r.opts.MinFileSize)
}

// refuse names, before anything is written, what the rewrite cannot read
// or turn into vectors safely.
func (r *run) refuse(groups []*group, toVectors bool) error {
	seen := map[string]string{}
	for _, g := range groups {
		for _, f := range g.files {
			if f.df.FileFormat() != iceberg.ParquetFile {
				return fmt.Errorf("%w: %s: position delete file %s is %s; only Parquet position delete files are rewritten", ErrUnsupported, r.name, f.df.FilePath(), f.df.FileFormat())
			}
		}
		if !toVectors {
			continue
		}
		for _, f := range g.files {
			if ref := f.df.ReferencedDataFile(); ref != nil {
				if other, ok := seen[*ref]; ok && other != g.name {
					return fmt.Errorf("%w: %s: data file %s has position deletes in two partitions (%q and %q); their vectors cannot be merged safely", ErrUnsupported, r.name, *ref, other, g.name)
				}
				seen[*ref] = g.name
			}
		}
	}
	return nil
}

// batches splits groups into commits: one, or with partial progress up
// to MaxCommits.
func (r *run) batches(groups []*group) [][]*group {
	if !r.opts.PartialProgress || len(groups) < 2 {
		return [][]*group{groups}
	}
	per := (len(groups) + r.opts.MaxCommits - 1) / r.opts.MaxCommits
	var out [][]*group
	for len(groups) > 0 {
		n := min(per, len(groups))
		out = append(out, groups[:n])
		groups = groups[n:]
	}
	return out
}

// rewriteBatch rewrites groups and commits them as one replace snapshot;
// on any failure before the commit it deletes what it wrote.
func (r *run) rewriteBatch(ctx context.Context, groups []*group, res *Result) (err error) {
	outs := make([]*output, len(groups))
	var mu sync.Mutex
	var written []string
	defer func() {
		if err != nil && !catalogs.OutcomeUnknown(err) {
			geowrite.RemoveWritten(context.WithoutCancel(ctx), r.tbl, written, r.log)
		}
	}()
	errs := make([]error, len(groups))
	sem := make(chan struct{}, r.opts.MaxConcurrent)
	var wg sync.WaitGroup
	for i, g := range groups {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			o, err := r.rewriteGroup(ctx, g)
			if o != nil {
				mu.Lock()
				written = append(written, o.written...)
				mu.Unlock()
			}
			outs[i], errs[i] = o, err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("rewrite position deletes of %s: %w", r.name, err)
	}
	if err := r.gate(outs); err != nil {
		return format.NotCommitted(err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	id, err := r.commit(ctx, outs)
	if err != nil {
		return err
	}
	res.SnapshotIDs = append(res.SnapshotIDs, id)
	for _, o := range outs {
		res.RewrittenDeleteFilesCount += len(o.removed)
		for _, d := range o.removed {
			res.RewrittenBytesCount += d.size()
		}
		res.AddedDeleteFilesCount += len(o.added)
		for _, a := range o.added {
			res.AddedBytesCount += addedSize(a)
		}
		res.DeletesKept += o.kept
		res.DanglingDropped += o.dropped
	}
	return nil
}

// addedSize is a new delete file's bytes: its blob's for a vector.
func addedSize(df iceberg.DataFile) int64 {
	return deleteFile{df: df}.size()
}

// gate checks, before the commit, that every group's new files hold the
// positions it kept and lie in the table.
func (r *run) gate(outs []*output) error {
	g := format.Gate{Op: "rewrite-deletes", Table: r.name, Roots: format.IcebergRoots(r.tbl.Location(), r.tbl.Properties())}
	groups := make([]format.GateGroup, 0, len(outs))
	for _, o := range outs {
		gg := format.GateGroup{Name: o.g.name, Read: o.kept}
		for _, a := range o.added {
			gg.Files = append(gg.Files, format.GateFile{Path: a.FilePath(), Records: a.Count()})
		}
		groups = append(groups, gg)
	}
	return g.Check(groups)
}

// commit commits outs as one replace snapshot on a fresh load of the
// table, retrying when another writer committed first.
func (r *run) commit(ctx context.Context, outs []*output) (int64, error) {
	var id int64
	retries := catalogs.Spec{CommitRetries: r.cfg.CommitRetries}.Retries()
	err := catalogs.CommitRetried(ctx, r.cat, r.name, retries, func(ctx context.Context) (*table.Table, error) {
		if r.cfg.BeforeCommit != nil {
			r.cfg.BeforeCommit(ctx)
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		tbl, err := catalogs.LoadTable(ctx, r.cat, r.name)
		if err != nil {
			return nil, err
		}
		cur, err := readState(ctx, tbl)
		if err != nil {
			return nil, fmt.Errorf("reload %s: %w", r.name, err)
		}
		if err := checkBase(cur, outs); err != nil {
			return nil, err
		}
		tx := tbl.NewTransaction()
		rw := tx.NewRewrite(iceberg.Properties{SummaryOperation: "rewrite-position-delete-files", format.SummaryGroups: strconv.Itoa(len(outs))})
		for _, o := range outs {
			for _, d := range o.removed {
				rw.DeleteFile(d.df)
			}
			for _, a := range o.added {
				rw.AddDeleteFile(a)
			}
		}
		if err := rw.Commit(ctx); err != nil {
			return nil, fmt.Errorf("stage the rewrite of %s's delete files: %w", r.name, err)
		}
		nt, err := tx.Commit(ctx)
		if err != nil {
			return nil, fmt.Errorf("commit the rewrite of %s's delete files: %w", r.name, err)
		}
		id = nt.CurrentSnapshot().SnapshotID
		return nt, nil
	})
	if catalogs.NothingCommitted(err) {
		err = format.NotCommitted(err)
	}
	return id, err
}

// checkBase checks that every delete file outs replace is still live in
// cur, and that no data file given a new vector has gained or lost one
// since it was read: committing then would lose deletes.
func checkBase(cur *state, outs []*output) error {
	live := map[string]bool{}
	for _, d := range cur.files {
		live[d.key()] = true
	}
	for _, v := range cur.vectors {
		live[v.key()] = true
	}
	for _, o := range outs {
		for _, d := range o.removed {
			if !live[d.key()] {
				return fmt.Errorf("%w: delete file %s was removed by a concurrent commit; nothing was committed, run the rewrite again", catalogs.ErrConflict, d.df.FilePath())
			}
		}
		for path, had := range o.vectors {
			now, ok := cur.vectors[path]
			if ok != (had != "") || ok && now.key() != had {
				return fmt.Errorf("%w: the deletion vector of data file %s changed in a concurrent commit; nothing was committed, run the rewrite again", catalogs.ErrConflict, path)
			}
		}
	}
	return nil
}
