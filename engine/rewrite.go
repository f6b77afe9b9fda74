package engine

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/geocompact/geocompact/cluster"
	"github.com/geocompact/geocompact/engine/spill"
	"github.com/geocompact/geocompact/engine/verify"
	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/sql/where"
	format "github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/table/icebergtable"
)

// Snapshot summary keys a rewrite records.
const (
	SummaryStrategy  = "geocompact.strategy"
	SummarySortOrder = "geocompact.sort-order"
	SummaryGroups    = "geocompact.file-groups"
	SummaryJobID     = "geocompact.job-id"
)

// Rewrite compacts the table called name in cat as cfg says: plan which
// files to rewrite, rewrite each group (ordered by the sort key across the
// whole group for the sort strategy), verify that the rows written are the
// rows read, and commit a replace snapshot (or partial-progress batches).
//
// When nothing is rewritten the result says why in NoopReason; that is
// not an error. On any failure the files written so far are deleted and
// the table is left as it was (or, with partial progress, with the batches
// that committed).
func Rewrite(ctx context.Context, cat catalog.Catalog, name string, cfg Request) (*Result, error) {
	start := time.Now()
	r, tbl, filter, err := newRewriter(ctx, cat, name, cfg)
	if err != nil {
		return nil, err
	}
	res, err := r.run(ctx, tbl, filter)
	if res != nil {
		res.Duration = time.Since(start)
	}
	return res, err
}

// newRewriter loads the table and checks cfg against it.
func newRewriter(ctx context.Context, cat catalog.Catalog, name string, cfg Request) (*rewriter, *table.Table, iceberg.BooleanExpression, error) {
	cat = catalogs.Wrap(cat)
	tbl, err := catalogs.LoadTable(ctx, cat, name)
	if err != nil {
		return nil, nil, nil, err
	}
	opts, err := ParseOptions(cfg.Options, tbl.Properties())
	if err != nil {
		return nil, nil, nil, err
	}
	lay, err := resolveLayout(tbl, cfg, opts)
	if err != nil {
		return nil, nil, nil, err
	}
	filter, err := where.Parse(cfg.Where, tbl.Schema())
	if err != nil {
		return nil, nil, nil, err
	}
	r := &rewriter{cat: cat, name: name, cfg: cfg, opts: opts, lay: lay, log: cfg.logger().With("table", name)}
	return r, tbl, filter, nil
}

// rewriter carries one rewrite's settings through its phases.
type rewriter struct {
	cat  catalog.Catalog // nil for a table of another format (RewriteTable)
	name string
	cfg  Request
	opts Options
	lay  layout
	// autoOrders are the orders --curve auto chose, by group (nil for any
	// other layout).
	autoOrders []cluster.Order
	// auto is what --curve auto chose, for the snapshot summary.
	auto []AutoChoice
	// jobID, when set, tags the commit's snapshot summary.
	jobID string
	log   interface {
		Debug(string, ...any)
		Info(string, ...any)
		Warn(string, ...any)
	}
}

func (r *rewriter) run(ctx context.Context, tbl *table.Table, filter iceberg.BooleanExpression) (*Result, error) {
	res, tf, err := r.plan(ctx, tbl, filter)
	if err != nil || len(res.Plan.Groups) == 0 {
		return res, err
	}
	return r.execute(ctx, res, tf)
}

// execute runs the plan of res (which has groups) on the table tf: plans
// each group's sort, then rewrites, verifies and commits the groups
// (nothing more on a dry run). The core of a rewrite, in any format.
func (r *rewriter) execute(ctx context.Context, res *Result, tf Format) (*Result, error) {
	plan := res.Plan
	r.planSorts(plan, r.concurrency(plan))
	if !r.cfg.DryRun {
		// Every run, spilling or not, removes what killed runs left.
		for _, p := range spill.CleanAbandoned(spill.Root(r.opts.SpillDir)) {
			r.log.Info("removed an abandoned spill directory", "path", p)
		}
		if err := r.checkSpill(plan, r.concurrency(plan)); err != nil {
			return nil, err
		}
	}
	r.log.Info("rewrite planned", "groups", len(plan.Groups), "files", plan.Files(), "bytes", plan.Bytes(), "skipped", len(plan.Skipped))
	if r.cfg.DryRun {
		return res, nil
	}
	ex := &execution{r: r, tf: tf, groups: len(plan.Groups), bytes: plan.Bytes()}
	// Cores left over by concurrent groups write files of a group in parallel.
	ex.lanes = max(1, runtime.NumCPU()/min(r.concurrency(plan), len(plan.Groups)))
	if err := ex.run(ctx, plan, res); err != nil {
		return res, err
	}
	return res, nil
}

// plan lists the table's files at its current snapshot and plans which to
// rewrite. A result with no groups says why in NoopReason.
func (r *rewriter) plan(ctx context.Context, tbl *table.Table, filter iceberg.BooleanExpression) (*Result, *icebergtable.Table, error) {
	if err := checkLayoutChange(tbl, r.lay, r.cfg); err != nil {
		return nil, nil, err
	}
	res := r.newResult()
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		res.NoopReason = "the table has no snapshot yet: there is no data to rewrite"
		return res, nil, nil
	}
	all, err := tbl.Scan(table.WithSnapshotID(snap.SnapshotID)).PlanFiles(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("plan files of %s: %w", r.name, err)
	}
	for _, t := range all {
		res.FilesBefore++
		res.BytesBefore += t.File.FileSizeBytes()
	}
	res.FilesAfter, res.BytesAfter = res.FilesBefore, res.BytesBefore
	selected := all
	if _, ok := filter.(iceberg.AlwaysTrue); !ok {
		// Tasks from a filtered scan would drop the non-matching rows of
		// the files they select; rewrite whole files, as Iceberg does.
		scoped, err := tbl.Scan(table.WithSnapshotID(snap.SnapshotID), table.WithRowFilter(filter)).PlanFiles(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("plan files of %s for --where: %w", r.name, err)
		}
		keep := make(map[string]bool, len(scoped))
		for _, t := range scoped {
			keep[t.File.FilePath()] = true
		}
		selected = slices.DeleteFunc(slices.Clone(all), func(t table.FileScanTask) bool { return !keep[t.File.FilePath()] })
	}
	tf := r.icebergTable(tbl, snap.SnapshotID, all)
	if err := r.planSelected(ctx, res, tf, icebergtable.PlanFiles(tbl, selected), len(all)); err != nil {
		return nil, nil, err
	}
	return res, tf, nil
}

// newResult is the result of a rewrite that has done nothing yet.
func (r *rewriter) newResult() *Result {
	return &Result{Strategy: string(r.lay.strategy), SortOrder: r.lay.orderText, LayoutSource: r.lay.source, DryRun: r.cfg.DryRun, Plan: &Plan{}}
}

// planSelected plans the rewrite of the selected files (of total in the
// table) into res.Plan, saying why in res.NoopReason when it has no
// groups, and for --curve auto chooses each group's layout from rows
// tf reads.
func (r *rewriter) planSelected(ctx context.Context, res *Result, tf Format, selected []PlanFile, total int) error {
	opts := r.opts
	opts.clustered = r.lay.spatial()
	res.Plan = opts.Plan(selected)
	if len(res.Plan.Groups) == 0 {
		res.NoopReason = res.Plan.Hint
		if len(selected) == 0 && total > 0 {
			res.NoopReason = fmt.Sprintf("no data file may hold rows matching --where %q (%d files in the table)", r.cfg.Where, total)
		}
		return nil
	}
	if r.lay.auto {
		var err error
		if r.auto, err = r.chooseLayouts(ctx, tf, res.Plan); err != nil {
			return err
		}
		res.Auto = r.auto
		r.lay.orderText = autoText(r.auto)
		res.SortOrder = r.lay.orderText
	}
	return nil
}

// icebergTable is tbl at snapshot snapshotID, whose live files are all,
// as the rewrite reads, writes and commits it.
func (r *rewriter) icebergTable(tbl *table.Table, snapshotID int64, all []table.FileScanTask) *icebergtable.Table {
	return &icebergtable.Table{Catalog: r.cat, Name: r.name, Retries: r.cfg.CommitRetries, Table: tbl, SnapshotID: snapshotID, All: all,
		BeforeCommit: testHookBeforeCommit}
}

// summary is the snapshot summary a rewrite commit records.
func (r *rewriter) summary(groups int) iceberg.Properties {
	p := iceberg.Properties{SummaryStrategy: string(r.lay.strategy), SummaryGroups: strconv.Itoa(groups)}
	if r.lay.orderText != "" {
		p[SummarySortOrder] = r.lay.orderText
	}
	if len(r.auto) > 0 {
		p[SummaryAuto] = autoSummary(r.auto)
	}
	if r.jobID != "" {
		p[SummaryJobID] = r.jobID
	}
	return p
}

// execution runs the groups of one plan and commits them.
type execution struct {
	r  *rewriter
	tf Format

	mu      sync.Mutex
	written []string // paths of every file written, for cleanup
	// created records every data file the format's writer creates, also
	// those a failed write left part-written, for cleanup.
	created *format.Created

	// lanes is how many files of one group are written at once.
	lanes int
	// writeID, when set, names each file written (see geowrite.SinkConfig.WriteID).
	writeID func() uuid.UUID

	progressMu sync.Mutex
	groupsDone int
	groups     int
	bytesDone  int64
	bytes      int64 // input bytes of all groups, when known
}

// progress reports a phase of group i (0-based; -1 for none).
func (ex *execution) progress(i int, phase string, step, steps int) {
	if ex.r.cfg.Progress == nil {
		return
	}
	ex.progressMu.Lock()
	defer ex.progressMu.Unlock()
	if phase == "done" {
		ex.groupsDone++
	}
	ex.r.cfg.Progress(Progress{Group: i + 1, Groups: ex.groups, GroupsDone: ex.groupsDone, Phase: phase, Step: step, Steps: steps,
		BytesDone: ex.bytesDone, Bytes: ex.bytes})
}

func (ex *execution) track(files []OutFile) {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	ex.written = append(ex.written, outPaths(files)...)
}

// cleanup deletes the files written for groups that did not commit.
func (ex *execution) cleanup(ctx context.Context, keep map[string]bool) {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	var drop []string
	seen := map[string]bool{}
	for _, p := range slices.Concat(ex.written, ex.created.Paths()) {
		if !keep[p] && !seen[p] {
			seen[p] = true
			drop = append(drop, p)
		}
	}
	if len(drop) == 0 {
		return
	}
	if err := ex.tf.Remove(ctx, drop); err != nil {
		ex.r.log.Warn("cleanup: could not delete files this rewrite wrote; orphans will find them", "error", err)
	}
}

// geomName is the table's geometry column ("" for none).
func (ex *execution) geomName() string {
	cols, _, err := ex.tf.Spatial()
	if err != nil {
		return ""
	}
	return cols.Geometry
}

// groupOut is what rewriting one group produced.
type groupOut struct {
	group    *Group
	index    int        // in the plan
	files    []PlanFile // the group's input files
	newFiles []OutFile
	in, out  verify.Digest
	err      error
}

// run rewrites the plan's groups, concurrency at a time, and commits them
// batch by batch as they finish, in plan order. Files of groups that did
// not commit are deleted before it returns.
func (ex *execution) run(ctx context.Context, plan *Plan, res *Result) error {
	ctx, ex.created = format.Track(ctx)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	outs, done := ex.launch(ctx, plan)
	st := &runState{committed: map[string]bool{}}
	for _, b := range ex.r.batches(len(plan.Groups)) {
		if !ex.runBatch(ctx, b, outs, done, res, st) {
			break
		}
	}
	cancel()
	for i := range done {
		<-done[i]
	}
	ex.cleanup(context.WithoutCancel(ctx), st.committed)
	return st.finish(res, len(plan.Groups))
}

// finish completes res after the last batch of a run of groups groups,
// and returns the run's error: the first failure, or, when some batches
// committed, a partial-progress error that says how many groups did.
func (st *runState) finish(res *Result, groups int) error {
	res.Verified = res.SnapshotsCommitted > 0 && res.FailedDataFilesCount == 0
	res.FilesAfter = res.FilesBefore - res.RewrittenDataFilesCount + res.AddedDataFilesCount
	res.BytesAfter = res.BytesBefore - res.RewrittenBytesCount + res.AddedBytesCount
	if st.firstErr != nil {
		if res.SnapshotsCommitted == 0 {
			return st.firstErr
		}
		return fmt.Errorf("partial progress: %d of %d groups committed; %w", st.groups, groups, st.firstErr)
	}
	return nil
}

// launch starts rewriting every group of the plan, at most
// ex.r.concurrency at a time, in plan order. done[i] is closed when
// outs[i] is set; a cancelled ctx fails the groups not yet started.
func (ex *execution) launch(ctx context.Context, plan *Plan) ([]*groupOut, []chan struct{}) {
	n := len(plan.Groups)
	outs := make([]*groupOut, n)
	done := make([]chan struct{}, n)
	for i := range done {
		done[i] = make(chan struct{})
	}
	sem := make(chan struct{}, ex.r.concurrency(plan))
	go func() {
		for i := range plan.Groups {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				for j := i; j < n; j++ {
					outs[j] = &groupOut{group: &plan.Groups[j], err: context.Cause(ctx)}
					close(done[j])
				}
				return
			}
			go func(i int) {
				defer func() { <-sem; close(done[i]) }()
				outs[i] = ex.rewriteGroup(ctx, i, &plan.Groups[i])
				ex.track(outs[i].newFiles)
			}(i)
		}
	}()
	return outs, done
}

// runState is what the commit batches of one run have done so far.
type runState struct {
	firstErr  error
	groups    int             // groups committed
	committed map[string]bool // paths of the files committed, or perhaps committed
}

// nothingCommitted reports whether a commit that failed with err surely
// left the table unchanged: it lost to another writer or found its base
// changed (catalogs.IsRetryable), or failed writing a file before the
// table could take it (catalogs.FailedWrite). Any other failure (a
// timeout after the commit was sent, a catalog's server error) leaves its
// outcome unknown, and the files it would add are kept: deleting them
// could break a commit the catalog took. Orphan cleanup finds them if it
// did not.
func nothingCommitted(err error) bool {
	return catalogs.IsRetryable(err) || catalogs.FailedWrite(err)
}

// fail records err, returning it only for the first failure; later ones
// are logged, as the first is returned.
func (st *runState) fail(err error) bool {
	if st.firstErr == nil {
		st.firstErr = err
		return true
	}
	return false
}

// runBatch waits for the groups of batch b and commits those that
// succeeded. It reports whether the run goes on: without partial progress
// the first failure stops it.
func (ex *execution) runBatch(ctx context.Context, b [2]int, outs []*groupOut, done []chan struct{}, res *Result, st *runState) bool {
	var ok []*groupOut
	for i := b[0]; i < b[1]; i++ {
		<-done[i]
		o := outs[i]
		if o.err != nil {
			res.FailedDataFilesCount += len(o.group.Files)
			if !st.fail(o.err) {
				ex.r.log.Warn("rewrite group failed", "group", i+1, "partition", o.group.Partition, "error", o.err)
			}
			continue
		}
		ok = append(ok, o)
	}
	if !ex.r.opts.PartialProgress && st.firstErr != nil {
		return false
	}
	if len(ok) == 0 {
		return true
	}
	id, removedDeletes, err := ex.commit(ctx, ok)
	if err != nil {
		for _, o := range ok {
			res.FailedDataFilesCount += len(o.group.Files)
			if !nothingCommitted(err) {
				// The commit may have been taken: its files stay.
				for _, f := range o.newFiles {
					st.committed[f.Path] = true
				}
			}
		}
		st.fail(err)
		return ex.r.opts.PartialProgress
	}
	res.SnapshotIDs = append(res.SnapshotIDs, id)
	res.SnapshotsCommitted++
	res.RemovedDeleteFilesCount += removedDeletes
	st.groups += len(ok)
	for _, o := range ok {
		res.RewrittenDataFilesCount += len(o.group.Files)
		res.RewrittenBytesCount += o.group.Bytes
		res.AddedDataFilesCount += len(o.newFiles)
		for _, f := range o.newFiles {
			res.AddedBytesCount += f.Size
			st.committed[f.Path] = true
		}
	}
	return true
}

// concurrency is how many groups run at once: the option, bounded by the
// cores (see ParseOptions). Sorted groups share the memory budget evenly.
func (r *rewriter) concurrency(*Plan) int {
	return max(1, r.opts.MaxConcurrent)
}

// batches splits n groups into commit batches: one for an atomic
// rewrite, up to partial-progress.max-commits otherwise.
func (r *rewriter) batches(n int) [][2]int {
	k := 1
	if r.opts.PartialProgress {
		k = min(n, r.opts.MaxCommits)
	}
	per := (n + k - 1) / k
	var out [][2]int
	for i := 0; i < n; i += per {
		out = append(out, [2]int{i, min(n, i+per)})
	}
	return out
}

func spatialGeomName(tbl *table.Table) string {
	cols, err := spatial.DiscoverTableColumns(tbl.Schema(), tbl.Properties(), "")
	if err != nil {
		return ""
	}
	return cols.Geometry
}

// Test hooks: run before each commit attempt, and after a group's files
// are written (an error fails the group).
var (
	testHookBeforeCommit func(context.Context)
	testHookAfterWrite   func() error
)
