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
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	format "github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/table/geowrite"
	"github.com/geocompact/geocompact/table/optval"
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
	// EqualityDeleteFilesConverted counts the equality delete files turned
	// into positions (with convert-equality-deletes); they count among the
	// rewritten files too.
	EqualityDeleteFilesConverted int `json:"equality_delete_files_converted"`
	// DeletionVectors says the new files are deletion vectors (a v3 table).
	DeletionVectors bool `json:"deletion_vectors"`
	// SnapshotIDs are the snapshots committed, one per commit (the last
	// of a conversion's two); SnapshotID is the last, 0 when none was.
	SnapshotIDs []int64 `json:"snapshot_ids,omitempty"`
	SnapshotID  int64   `json:"snapshot_id,omitempty"`
	DryRun      bool    `json:"dry_run"`
	// NoopReason says why nothing was rewritten; empty when something was.
	NoopReason string `json:"noop_reason,omitempty"`
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
	if r.opts.ConvertEquality && strings.TrimSpace(cfg.Where) != "" {
		return nil, fmt.Errorf("%w: %s resolves every equality delete file of the table; it takes no where predicate", optval.ErrBad, OptConvertEquality)
	}
	groups := r.st.plan(r, r.opts, res.DeletionVectors)
	if err := r.refuse(groups, res.DeletionVectors); err != nil {
		return nil, err
	}
	res.Groups = len(groups)
	if cfg.DryRun {
		for _, g := range groups {
			res.RewrittenDeleteFilesCount += len(g.files)
			res.RewrittenBytesCount += g.bytes()
		}
	} else {
		for _, batch := range r.batches(groups) {
			if err := r.rewriteBatch(ctx, batch, res); err != nil {
				return res, err
			}
		}
	}
	if r.opts.ConvertEquality {
		if err := r.convertEquality(ctx, res); err != nil {
			return res, err
		}
	}
	if res.Groups == 0 && res.EqualityDeleteFilesConverted == 0 {
		res.NoopReason = r.noop()
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
	case len(r.st.files) == 0 && r.opts.ConvertEquality:
		return "the table has no position or equality delete files"
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
	if len(groups) == 0 {
		return nil
	}
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
			removeWritten(ctx, r, written)
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
		return err
	}
	return r.commitOutputs(ctx, outs, res)
}

// commitOutputs commits outs as one snapshot and adds them to res.
func (r *run) commitOutputs(ctx context.Context, outs []*output, res *Result) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	id, err := r.commit(ctx, outs)
	if err != nil {
		return err
	}
	res.SnapshotIDs, res.SnapshotID = append(res.SnapshotIDs, id), id
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

// removeWritten deletes files a run wrote and will not commit.
func removeWritten(ctx context.Context, r *run, paths []string) {
	geowrite.RemoveWritten(context.WithoutCancel(ctx), r.tbl, paths, r.log)
}

// addedSize is a new delete file's bytes: its blob's for a vector.
func addedSize(df iceberg.DataFile) int64 {
	return deleteFile{df: df}.size()
}

// gate checks, before the commit, that every group's new files hold the
// positions it kept and lie in the table.
func (r *run) gate(outs []*output) error {
	if err := r.gateCheck(outs); err != nil {
		return format.NotCommitted(err)
	}
	return nil
}

func (r *run) gateCheck(outs []*output) error {
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
		if err := r.checkBase(cur, outs); err != nil {
			return nil, err
		}
		tx := tbl.NewTransaction()
		if err := r.stage(ctx, tx, outs); err != nil {
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

// stage stages outs in tx: one replace snapshot; or, for a conversion of
// equality deletes, which iceberg-go's rewrite refuses to express as a
// change of delete content, two in the one commit: a row delta adding the
// positions (and replacing the vectors they merge into), then a replace
// removing the equality delete files. Readers of either snapshot see the
// same rows.
func (r *run) stage(ctx context.Context, tx *table.Transaction, outs []*output) error {
	props := iceberg.Properties{SummaryOperation: "rewrite-position-delete-files", format.SummaryGroups: strconv.Itoa(len(outs))}
	converting := slices.ContainsFunc(outs, func(o *output) bool { return len(o.equality) > 0 })
	if !converting {
		rw := tx.NewRewrite(props)
		for _, o := range outs {
			for _, d := range o.removed {
				rw.DeleteFile(d.df)
			}
			for _, a := range o.added {
				rw.AddDeleteFile(a)
			}
		}
		return rw.Commit(ctx)
	}
	props[SummaryOperation] = "convert-equality-deletes"
	var equality []iceberg.DataFile
	rd := tx.NewRowDelta(props)
	for _, o := range outs {
		rd.AddDeletes(o.added...)
		for _, d := range o.removed {
			if d.df.ContentType() == iceberg.EntryContentEqDeletes {
				equality = append(equality, d.df)
			} else {
				rd.RemoveDeletes(d.df)
			}
		}
	}
	if slices.ContainsFunc(outs, func(o *output) bool { return len(o.added) > 0 }) {
		if err := rd.Commit(ctx); err != nil {
			return err
		}
	}
	rw := tx.NewRewrite(props)
	for _, e := range equality {
		rw.DeleteFile(e)
	}
	return rw.Commit(ctx)
}

// checkBase checks that every delete file outs replace is still live in
// cur, and that no data file given a new vector has gained or lost one
// since it was read: committing then would lose deletes.
func (r *run) checkBase(cur *state, outs []*output) error {
	live := map[string]bool{}
	for _, d := range cur.files {
		live[d.key()] = true
	}
	for _, v := range cur.vectors {
		live[v.key()] = true
	}
	for _, e := range cur.equality {
		live[e.key()] = true
	}
	for _, o := range outs {
		for _, d := range o.removed {
			if !live[d.key()] {
				return fmt.Errorf("%w: delete file %s was removed by a concurrent commit; nothing was committed, run the rewrite again", catalogs.ErrConflict, d.df.FilePath())
			}
		}
		for _, p := range o.equality {
			if now := r.appliesTo(cur, p.e); !slices.Equal(now, p.data) {
				return fmt.Errorf("%w: the data files equality delete file %s applies to changed in a concurrent commit; nothing was committed, run the conversion again", catalogs.ErrConflict, p.e.df.FilePath())
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
