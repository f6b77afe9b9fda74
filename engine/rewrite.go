package engine

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/geocompact/geocompact/cluster"
	"github.com/geocompact/geocompact/engine/spill"
	"github.com/geocompact/geocompact/engine/verify"
	"github.com/geocompact/geocompact/internal/suggest"
	"github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/optval"
)

// Rewrite compacts t as req says: plan which files to rewrite, rewrite
// each group (ordered by the sort key across the whole group for the sort
// strategy), verify that the rows written are the rows read, and commit a
// replace (or partial-progress batches) through t's format. It is the
// one entry for every format: table/icebergtable and table/deltatable
// open the table. It is Prepare, then Run.
//
// When nothing is rewritten the result says why in NoopReason; that is
// not an error. On any failure the files written so far are deleted and
// the table is left as it was (or, with partial progress, with the batches
// that committed).
func Rewrite(ctx context.Context, t table.Table, req Request) (*Result, error) {
	p, err := Prepare(ctx, t, req)
	if err != nil {
		return nil, err
	}
	return p.Run(ctx)
}

// Prepared is a rewrite whose decisions are made: its request checked
// against the table, its options read over the table's properties, its
// layout resolved and its files planned at the table's version. A caller
// that must check a rewrite before it runs (a SQL script checks every
// statement first) prepares it once and runs what it prepared.
type Prepared struct {
	r     *rewriter
	t     table.Table
	res   *Result
	start time.Time
	ran   bool
}

// Prepare checks req against t and plans it, writing nothing. Its errors
// are Rewrite's before anything is written.
func Prepare(ctx context.Context, t table.Table, req Request) (*Prepared, error) {
	start := time.Now()
	r, err := newRewriter(t, req)
	if err != nil {
		return nil, err
	}
	res, err := r.plan(ctx, t)
	if err != nil {
		return nil, err
	}
	return &Prepared{r: r, t: t, res: res, start: start}, nil
}

// Options are the options the rewrite runs with: the request's over the
// table's properties and the defaults.
func (p *Prepared) Options() Options { return p.r.opts }

// BinPacks reports whether the rewrite bin-packs its groups, each read
// and written in parts at once, one per lane (see binpackParts), rather
// than sorting them.
func (p *Prepared) BinPacks() bool { return p.r.lay.strategy != Sort }

// Result is the result of the plan before anything runs: the groups
// planned, or why there are none.
func (p *Prepared) Result() *Result { return p.res }

// use marks the prepared rewrite as run, refusing a second use: its plan
// is of one table version, and a run moves the table on.
func (p *Prepared) use() error {
	if p.ran {
		return errors.New("a prepared rewrite runs once: prepare it again")
	}
	p.ran = true
	return nil
}

// Version is the table version the rewrite was planned at.
func (p *Prepared) Version() int64 { return p.t.Version }

// Run runs the prepared rewrite (see Rewrite); a rewrite runs once.
func (p *Prepared) Run(ctx context.Context) (*Result, error) {
	if err := p.use(); err != nil {
		return nil, err
	}
	res, err := p.res, error(nil)
	if len(res.Plan.Groups) > 0 {
		res, err = p.r.execute(ctx, res, p.t)
	}
	if res != nil {
		res.Format, res.Duration = p.t.FormatName, time.Since(p.start)
	}
	return res, err
}

// newRewriter checks req against t: its options, its layout and its
// predicate.
func newRewriter(t table.Table, req Request) (*rewriter, error) {
	if req.Where != "" && t.Scope == nil {
		return nil, fmt.Errorf("%w: %w for table %s: rewrite it whole, or scope the rewrite with %s", optval.ErrBad, ErrNoWhere, t.Name, OptMaxFilesToRewrite)
	}
	req, err := req.Check()
	if err != nil {
		return nil, err
	}
	opts, err := req.OptionsFor(t.Properties)
	if err != nil {
		return nil, err
	}
	lt, err := layoutTableOf(t)
	if err != nil {
		return nil, err
	}
	lay, err := lt.resolve(req, opts)
	if err != nil {
		return nil, err
	}
	r := &rewriter{name: t.Name, cfg: req, opts: opts, lay: lay, lt: lt, log: req.logger().With("table", t.Name)}
	if req.Where != "" {
		if r.scope, err = t.Scope(req.Where); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// rewriter carries one rewrite's settings through its phases.
type rewriter struct {
	name string
	cfg  Request
	opts Options
	lay  layout
	// lt is the table as choosing a layout sees it.
	lt layoutTable
	// scope selects the files Request.Where may match (nil for none).
	scope table.Scoper
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

// execute runs the plan of res (which has groups) on the table tf: plans
// each group's sort, then rewrites, verifies and commits the groups
// (nothing more on a dry run). The core of a rewrite, in any format.
func (r *rewriter) execute(ctx context.Context, res *Result, tf table.Format) (*Result, error) {
	plan := res.Plan
	r.planSorts(plan, r.concurrency(plan))
	if !r.cfg.DryRun {
		// Every run, spilling or not, removes what killed runs left.
		for _, p := range spill.CleanAbandoned(spill.Root(r.opts.SpillDir)) {
			r.log.Info("removed an abandoned spill directory", "path", p)
		}
		if err := r.checkSpill(ctx, plan, r.concurrency(plan)); err != nil {
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
	if h := hooksOf(ctx); h.Lanes > 0 {
		ex.lanes = h.Lanes
	}
	if err := ex.run(ctx, plan, res); err != nil {
		return res, err
	}
	return res, nil
}

// plan plans which of t's files to rewrite. A result with no groups says
// why in NoopReason.
func (r *rewriter) plan(ctx context.Context, t table.Table) (*Result, error) {
	if err := r.lt.checkLayoutChange(r.lay, r.cfg); err != nil {
		return nil, err
	}
	res := r.newResult()
	for _, f := range t.Files {
		res.FilesBefore++
		res.BytesBefore += f.Size
	}
	res.FilesAfter, res.BytesAfter = res.FilesBefore, res.BytesBefore
	if t.Empty != "" {
		res.NoopReason = t.Empty
		return res, nil
	}
	selected := t.Files
	if r.scope != nil {
		var err error
		if selected, err = r.scope(ctx, t.Files); err != nil {
			return nil, err
		}
	}
	if err := r.planSelected(ctx, res, t, selected, len(t.Files)); err != nil {
		return nil, err
	}
	return res, nil
}

// newResult is the result of a rewrite that has done nothing yet.
func (r *rewriter) newResult() *Result {
	return &Result{Strategy: string(r.lay.strategy), SortOrder: r.lay.orderText, LayoutSource: r.lay.source, DryRun: r.cfg.DryRun, Plan: &Plan{}}
}

// planSelected plans the rewrite of the selected files (of total in the
// table) into res.Plan, saying why in res.NoopReason when it has no
// groups, and for --curve auto chooses each group's layout from rows
// tf reads.
func (r *rewriter) planSelected(ctx context.Context, res *Result, tf table.Format, selected []table.PlanFile, total int) error {
	opts := r.opts
	opts.clustered = r.lay.spatial()
	res.Plan = opts.Plan(selected)
	if len(res.Plan.Groups) == 0 {
		res.NoopReason = res.Plan.Hint
		if len(selected) == 0 && total > 0 {
			res.NoopReason = fmt.Sprintf("no data file may hold rows matching the where filter %s (%d files in the table)", suggest.Excerpt(r.cfg.Where), total)
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

// summary is the snapshot summary a rewrite commit records.
func (r *rewriter) summary(groups int) map[string]string {
	p := map[string]string{table.SummaryStrategy: string(r.lay.strategy), table.SummaryGroups: strconv.Itoa(groups)}
	if r.lay.orderText != "" {
		p[table.SummarySortOrder] = r.lay.orderText
	}
	if len(r.auto) > 0 {
		p[SummaryAuto] = autoSummary(r.auto)
	}
	if r.jobID != "" {
		p[table.SummaryJobID] = r.jobID
	}
	if r.cfg.PurgeDeletes {
		p[table.SummaryPurge] = "true"
	}
	return p
}

// execution runs the groups of one plan and commits them.
type execution struct {
	r  *rewriter
	tf table.Format

	mu      sync.Mutex
	written []string // paths of every file written, for cleanup
	// created records every data file the format's writer creates, also
	// those a failed write left part-written, for cleanup.
	created *table.Created

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

func (ex *execution) track(files []table.OutFile) {
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
	index    int              // in the plan
	files    []table.PlanFile // the group's input files
	newFiles []table.OutFile
	in, out  verify.Digest
	err      error
}

// run rewrites the plan's groups, concurrency at a time, and commits them
// batch by batch as they finish, in plan order. Files of groups that did
// not commit are deleted before it returns.
func (ex *execution) run(ctx context.Context, plan *Plan, res *Result) error {
	ctx, ex.created = table.Track(ctx)
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
// left the table unchanged, as the format marks it (table.NotCommitted).
// Any other failure (a timeout after the commit was sent, a catalog's
// server error) leaves its outcome unknown, and the files it would add
// are kept: deleting them could break a commit the catalog took. Orphan
// cleanup finds them if it did not.
func nothingCommitted(err error) bool {
	return table.IsNotCommitted(err)
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
// cores (see Request.OptionsFor). Sorted groups share the memory budget evenly.
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
