package engine

import (
	"context"
	"fmt"
	"runtime"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/google/uuid"

	"github.com/geocompact/geocompact/cluster"
	"github.com/geocompact/geocompact/engine/spill"
	"github.com/geocompact/geocompact/engine/verify"
	"github.com/geocompact/geocompact/table"
)

// Pieces are the steps of one rewrite at one snapshot of its table, as
// plain functions for an engine that runs them in other processes
// (job drives them; Rewrite runs the same steps in one process): plan
// and sample bucket boundaries (Prepare and Prepared.Pieces, on the
// driver), scatter one input file into keyed row batches (Scatter),
// order and write a bucket's rows and read the files back (NewWriter, on
// a worker opened with OpenPieces), and verify and commit (Commit, on
// the driver).
type Pieces struct {
	ex     *execution
	t      table.Table
	groups []GroupSpec
	files  map[string]table.PlanFile
}

// GroupSpec is one planned group as the pieces carry it between
// processes: plain data that travels as JSON.
//
// A group's rows are cut into buckets: for a sorted group, key ranges
// between Bounds (so sorting each bucket and concatenating the buckets is
// the group's order); for binpack, bucket i is the group's i-th input
// file (so the buckets in order are the rows in read order).
type GroupSpec struct {
	Partition string   `json:"partition"`
	Files     []string `json:"files"`
	// OutputFiles and Records are the plan's: the files to write and the
	// rows the metadata counts (before deletes).
	OutputFiles int   `json:"output_files"`
	Records     int64 `json:"records"`
	// CutWindow is the plan's Group.CutWindow.
	CutWindow float64 `json:"cut_window_fraction,omitempty"`
	// Whole is set for a sorted group one worker sorts in memory: it is
	// rewritten by RewriteGroup, as the local engine rewrites it, and its
	// rows never go through a shuffle.
	Whole bool `json:"whole,omitempty"`
	// Local is set for a sorted group over the budget that one worker
	// rewrites whole by RewriteGroup, spilling as the local engine does
	// (see PieceOptions.Spread): it has no buckets.
	Local bool `json:"local,omitempty"`
	// Buckets is how many buckets the group's rows are scattered into.
	Buckets int `json:"buckets"`
	// Scale and Bounds key a sorted group's rows and cut the keys into
	// bucket ranges; Scale is nil for binpack.
	Scale  *cluster.Scale `json:"scale,omitempty"`
	Bounds []uint64       `json:"bounds,omitempty"`
	// CutShift, when not 0, is set for a layout that cuts its files at
	// cells key>>CutShift (kd's leaves; see cluster.Sorter.CutShift):
	// Scatter then counts the rows of each cell, and the group's files are
	// cut where the local engine cuts them, from the cell counts of all
	// its rows (see FileRows).
	CutShift uint `json:"cut_shift,omitempty"`
}

// PieceOptions name what the pieces of a distributed rewrite write.
type PieceOptions struct {
	// JobID tags the commit's snapshot summary (SummaryJobID).
	JobID string
	// WriteID, when set, names each data file written: a fresh UUID per
	// file, so retried attempts never collide.
	WriteID func() uuid.UUID
	// Spread, when set, reports whether a sorted group over the budget of
	// records rows (of total in all groups) is to be spread over workers:
	// only such a group's keys are sampled for its buckets; the others are
	// Local. Unset, every such group is spread.
	Spread func(records, total int64) bool
}

// Pieces gives the prepared rewrite as pieces for other processes to
// run, in place of Run: for sorted groups it learns each group's key
// scale and the boundaries of its buckets (one pass over the key
// columns). A sorted group gets as many buckets as it takes for each to
// fit max-group-memory-bytes, the memory one worker sorts a bucket in.
// The pieces are nil when there is nothing to rewrite (Result says why)
// and on a dry run. A layout chosen per group (auto) is refused with
// ErrAutoDistributed. A prepared rewrite gives its pieces or runs, once.
func (pr *Prepared) Pieces(ctx context.Context, po PieceOptions) (*Pieces, error) {
	if err := pr.use(); err != nil {
		return nil, err
	}
	r, t, res := pr.r, pr.t, pr.res
	if r.lay.auto {
		return nil, ErrAutoDistributed
	}
	if len(res.Plan.Groups) == 0 {
		return nil, nil
	}
	if r.cfg.DryRun {
		// Each bucket is sorted by one worker in the whole budget.
		for i := range res.Plan.Groups {
			if r.lay.strategy == Sort {
				res.Plan.Groups[i].Sort = sortPlanFor(&res.Plan.Groups[i], r.opts.MaxGroupMemoryBytes)
			}
		}
		return nil, nil
	}
	r.jobID = po.JobID
	if r.opts.CutWindowFraction > 0 && r.lay.strategy == Sort {
		r.log.Warn("cut-window-fraction is not applied to the groups a distributed rewrite scatters across workers: their files are cut at equal row counts (kd's at its leaves)")
	}
	p := &Pieces{t: t, ex: &execution{r: r, tf: t, groups: len(res.Plan.Groups), lanes: 1, writeID: po.WriteID}}
	p.index()
	var total int64
	for _, g := range res.Plan.Groups {
		total += g.Records
	}
	for i := range res.Plan.Groups {
		spread := po.Spread == nil || po.Spread(res.Plan.Groups[i].Records, total)
		g, err := p.sample(ctx, &res.Plan.Groups[i], spread)
		if err != nil {
			return nil, fmt.Errorf("prepare group %d (%s): %w", i+1, PartitionLabel(res.Plan.Groups[i].Partition), err)
		}
		p.groups = append(p.groups, g)
	}
	return p, nil
}

// sample returns the spec of planned group g: for a sorted group over the
// budget that is to be spread, with the key scale and bucket boundaries
// learnt from its key columns.
func (p *Pieces) sample(ctx context.Context, g *Group, spread bool) (GroupSpec, error) {
	spec := GroupSpec{Partition: g.Partition, OutputFiles: g.OutputFiles, Records: g.Records, CutWindow: g.CutWindow, Buckets: len(g.Files)}
	for _, f := range g.Files {
		spec.Files = append(spec.Files, f.Path)
	}
	if p.ex.r.lay.strategy != Sort {
		return spec, nil
	}
	sp := sortPlanFor(g, p.ex.r.opts.MaxGroupMemoryBytes)
	if !sp.Spill {
		spec.Whole, spec.Buckets = true, 0
		return spec, nil
	}
	if !spread {
		spec.Local, spec.Buckets = true, 0
		return spec, nil
	}
	gio, _, err := p.ex.readGroup(ctx, p.groupOut(len(p.groups), &spec), nil)
	if err != nil {
		return spec, err
	}
	sorter, err := p.ex.sorter(gio.readSc, g.OutputFiles)
	if err != nil {
		return spec, err
	}
	if shift, ok := sorter.CutShift(); ok {
		spec.CutShift = shift
	}
	_, bounds, scale, err := p.ex.sampleKeys(ctx, gio, sorter, max(sp.Buckets, 1))
	if err != nil {
		return spec, fmt.Errorf("sample: %w", err)
	}
	spec.Scale, spec.Bounds, spec.Buckets = &scale, bounds, len(bounds)+1
	return spec, nil
}

// OpenPieces readies the pieces of a planned rewrite in a worker, on t
// opened at the version they were planned on. Every file of groups is one
// of t's files, as the caller checks (see MissingFiles).
func OpenPieces(t table.Table, req Request, groups []GroupSpec, po PieceOptions) (*Pieces, error) {
	r, err := newRewriter(t, req)
	if err != nil {
		return nil, err
	}
	r.jobID = po.JobID
	p := &Pieces{groups: groups, t: t, ex: &execution{r: r, tf: t, groups: len(groups),
		lanes: max(1, runtime.NumCPU()/2), writeID: po.WriteID}}
	p.index()
	if missing := MissingFiles(t, groups); len(missing) > 0 {
		return nil, fmt.Errorf("data file %s is not in version %d of %s", missing[0], t.Version, t.Name)
	}
	return p, nil
}

// MissingFiles are the files of groups that t does not hold.
func MissingFiles(t table.Table, groups []GroupSpec) []string {
	have := make(map[string]bool, len(t.Files))
	for _, f := range t.Files {
		have[f.Path] = true
	}
	var missing []string
	for _, g := range groups {
		for _, f := range g.Files {
			if !have[f] {
				missing = append(missing, f)
			}
		}
	}
	return missing
}

func (p *Pieces) index() {
	p.files = make(map[string]table.PlanFile, len(p.t.Files))
	for _, f := range p.t.Files {
		p.files[f.Path] = f
	}
}

// Groups are the specs of the planned groups, in plan order.
func (p *Pieces) Groups() []GroupSpec { return p.groups }

// Version is the snapshot (or version) the pieces read.
func (p *Pieces) Version() int64 { return p.t.Version }

// group returns a fresh groupOut for group i.
func (p *Pieces) group(i int) *groupOut { return p.groupOut(i, &p.groups[i]) }

// groupOut returns a fresh groupOut for group i of spec s (the plan's
// view of it is rebuilt from the spec).
func (p *Pieces) groupOut(i int, s *GroupSpec) *groupOut {
	o := &groupOut{group: &Group{Partition: s.Partition, Records: s.Records, OutputFiles: s.OutputFiles, CutWindow: s.CutWindow}, index: i, in: verify.NewDigest(), out: verify.NewDigest()}
	for _, f := range s.Files {
		pf := p.files[f]
		o.files = append(o.files, pf)
		o.group.Bytes += pf.Size
	}
	o.group.Files = o.files
	return o
}

func (p *Pieces) checkGroup(i int) error {
	if i < 0 || i >= len(p.groups) {
		return fmt.Errorf("the rewrite has no group %d", i)
	}
	return nil
}

// frozen returns the sorter that keys group i's rows of schema sc with
// its scale.
func (p *Pieces) frozen(sc *arrow.Schema, i int) (*cluster.Sorter, error) {
	s, err := p.ex.sorter(sc, p.groups[i].OutputFiles)
	if err != nil {
		return nil, err
	}
	return s.WithScale(*p.groups[i].Scale)
}

// Scatter reads the data file at path of group group (its deletes
// applied), validates and digests its rows, and hands them to emit cut
// by bucket (emit owns each batch). It returns the digest of the rows
// read and, for a group with a CutShift, the rows of each cell sent each
// bucket (cells[b] for bucket b; nil otherwise).
func (p *Pieces) Scatter(ctx context.Context, group int, path string, emit func(bucket int, rec arrow.RecordBatch) error) (verify.Digest, []cluster.Cells, error) {
	if err := p.checkGroup(group); err != nil {
		return verify.Digest{}, nil, err
	}
	spec := &p.groups[group]
	if spec.Whole || spec.Local {
		return verify.Digest{}, nil, fmt.Errorf("group %d is rewritten whole by one worker: it is not scattered", group+1)
	}
	pos := -1
	for i, f := range spec.Files {
		if f == path {
			pos = i
		}
	}
	if pos < 0 {
		return verify.Digest{}, nil, fmt.Errorf("data file %s is not in group %d", path, group+1)
	}
	o := p.group(group)
	g, recs, err := p.ex.readGroup(ctx, o, o.files[pos:pos+1])
	if err != nil {
		return verify.Digest{}, nil, err
	}
	var frozen *cluster.Sorter
	if spec.Scale != nil {
		if frozen, err = p.frozen(g.readSc, group); err != nil {
			return verify.Digest{}, nil, err
		}
	}
	var cells []cluster.Cells
	if spec.CutShift != 0 {
		cells = make([]cluster.Cells, spec.Buckets)
		for b := range cells {
			cells[b] = cluster.Cells{}
		}
	}
	counts := make([]int32, spec.Buckets+1)
	err = eachBatch(recs, g.digest, func(rec arrow.RecordBatch) error {
		defer rec.Release()
		if frozen == nil { // binpack: the file is its bucket
			rec.Retain()
			return emit(pos, rec)
		}
		return scatterBatch(rec, g.readSc, frozen, spec, counts, cells, emit)
	})
	if err != nil {
		return verify.Digest{}, nil, fmt.Errorf("scatter %s: %w", path, p.ex.tf.BrokenInput(ctx, o.files[pos:pos+1], err))
	}
	return o.in, cells, nil
}

// scatterBatch cuts rec's rows by bucket for emit, and adds them to the
// cells of their buckets when cells is not nil.
func scatterBatch(rec arrow.RecordBatch, sc *arrow.Schema, frozen *cluster.Sorter, spec *GroupSpec, counts []int32, cells []cluster.Cells, emit func(int, arrow.RecordBatch) error) error {
	keys, err := frozen.Keys(rec)
	if err != nil {
		return fmt.Errorf("key: %w", err)
	}
	if cells != nil {
		for _, k := range keys {
			cells[spill.BucketOf(spec.Bounds, k)][k>>spec.CutShift]++
		}
	}
	grouped, err := spill.GroupByBucket(rec, sc, keys, spec.Bounds, counts)
	if err != nil {
		return err
	}
	defer grouped.Release()
	for b := range spec.Buckets {
		if lo, hi := int64(counts[b]), int64(counts[b+1]); lo < hi {
			if err := emit(b, grouped.NewSlice(lo, hi)); err != nil {
				return err
			}
		}
	}
	return nil
}

// RewriteGroup reads, sorts, writes and verifies group group whole, as
// the local engine does, and returns the files written and the digests
// of the rows read (in) and written (out). After an error it still
// returns the files written, for Abort.
func (p *Pieces) RewriteGroup(ctx context.Context, group int) ([]table.OutFile, verify.Digest, verify.Digest, error) {
	if err := p.checkGroup(group); err != nil {
		return nil, verify.Digest{}, verify.Digest{}, err
	}
	o := p.group(group)
	if err := p.ex.rewriteGroupErr(ctx, o); err != nil {
		err = p.ex.tf.BrokenInput(ctx, o.files, err)
		return o.newFiles, o.in, o.out, fmt.Errorf("rewrite group %d (%s): %w", group+1, PartitionLabel(o.group.Partition), err)
	}
	return o.newFiles, o.in, o.out, nil
}

// FileRows returns the row count of the group's i-th output file when it
// holds rows rows in all: the cuts the local engine makes (equal counts
// for a sorted group, even chunks of the planned count for binpack). For
// a group with a CutShift they are cut at its cells, from cells, the
// counts of all the group's rows (the sum of what Scatter returned for
// every bucket of every file): exactly the local engine's cuts, since
// these are the counts it takes.
func (s *GroupSpec) FileRows(rows int64, cells cluster.Cells) (func(i int) int64, error) {
	if s.CutShift != 0 {
		var n int64
		for _, c := range cells {
			n += c
		}
		if n != rows {
			return nil, fmt.Errorf("the cell counts of the group hold %d rows, want %d: pass the counts Scatter returned for every file", n, rows)
		}
		return runFileRows(cells.Runs(), s.OutputFiles), nil
	}
	if s.Scale != nil {
		per := sortedFileRows(rows, s.OutputFiles)
		return func(int) int64 { return per }, nil
	}
	return evenChunks(s.Records, s.OutputFiles), nil
}

// PieceWriter writes rows of one group as data files of given row counts
// and digests them as read back.
type PieceWriter struct {
	p     *Pieces
	group int
	g     *groupIO
	sink  table.Sink
}

// NewWriter returns a writer of rows of group group into files of
// fileRows(0), fileRows(1), ... rows.
func (p *Pieces) NewWriter(ctx context.Context, group int, fileRows func(int) int64) (*PieceWriter, error) {
	if err := p.checkGroup(group); err != nil {
		return nil, err
	}
	g, _, err := p.ex.readGroup(ctx, p.group(group), nil)
	if err != nil {
		return nil, err
	}
	sink := p.ex.newSink(ctx, g.o, g.sc, fileRows, sinkQueue)
	return &PieceWriter{p: p, group: group, g: g, sink: sink}, nil
}

// Order is the order of a bucket's rows (recs, in input order): sorted by
// the group's key for a sorted group (stable, so equal keys keep input
// order), as they are for binpack.
func (w *PieceWriter) Order(recs []arrow.RecordBatch) ([]int32, error) {
	if w.p.groups[w.group].Scale != nil {
		frozen, err := w.p.frozen(w.g.readSc, w.group)
		if err != nil {
			return nil, err
		}
		perm, err := frozen.Permutation(recs)
		if err != nil {
			return nil, fmt.Errorf("sort: %w", err)
		}
		return perm, nil
	}
	var n int32
	for _, r := range recs {
		n += int32(r.NumRows())
	}
	perm := make([]int32, n)
	for i := range perm {
		perm[i] = int32(i)
	}
	return perm, nil
}

// Gather hands the rows of recs, in perm's order, to use (which owns each
// batch), a few MiB at a time.
func (w *PieceWriter) Gather(recs []arrow.RecordBatch, perm []int32, use func(arrow.RecordBatch) error) error {
	return gatherEach(w.g.readSc, recs, perm, use)
}

// Write sends the rows of rec to the files they belong to. It takes
// ownership of rec.
func (w *PieceWriter) Write(rec arrow.RecordBatch) error {
	if err := w.sink.Write(rec); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

// Close finishes the files and reads them back: it returns them, in
// order, with the digest of their rows. After an error it still returns
// the files written.
func (w *PieceWriter) Close(ctx context.Context) ([]table.OutFile, verify.Digest, error) {
	d := verify.NewDigest()
	files, err := w.sink.Close()
	if err != nil {
		return files, d, fmt.Errorf("write: %w", err)
	}
	err = w.p.ex.readBack(ctx, w.g.o.files, files, w.g.geom, w.g.bbox, &d)
	return files, d, err
}

// Commit verifies what was written for every group (the digests of the
// rows read, in, against those of the files written read back, out), then
// replaces the planned files with files, with the local engine's commit
// batches and conflict handling, and adds what it did to res (whose plan
// is the one the pieces were planned with). The replaced files come from
// the plan, never from the workers. Without partial progress one snapshot
// commits every group, or nothing is committed; with it each batch of
// groups commits on its own, and a group that fails verification, or a
// batch that fails to commit, fails alone, as in a local rewrite.
func (p *Pieces) Commit(ctx context.Context, res *Result, files [][]table.OutFile, in, out []verify.Digest) error {
	n := len(p.groups)
	if len(files) != n || len(in) != n || len(out) != n {
		return fmt.Errorf("commit: %d groups, got files for %d and digests for %d and %d", n, len(files), len(in), len(out))
	}
	outs := make([]*groupOut, n)
	done := make([]chan struct{}, n)
	for i := range p.groups {
		outs[i] = p.group(i)
		outs[i].newFiles, outs[i].in, outs[i].out = files[i], in[i], out[i]
		if d := in[i].Diff(out[i]); d != "" {
			outs[i].err = fmt.Errorf("group %d (%s): %w: %s; nothing was committed", i+1, PartitionLabel(p.groups[i].Partition), ErrVerify, d)
		}
		done[i] = make(chan struct{})
		close(done[i])
	}
	st := &runState{committed: map[string]bool{}}
	for _, b := range p.ex.r.batches(n) {
		if !p.ex.runBatch(ctx, b, outs, done, res, st) {
			break
		}
	}
	return st.finish(res, n)
}
