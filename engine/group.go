package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/geocompact/geocompact/cluster"
	"github.com/geocompact/geocompact/engine/cuts"
	"github.com/geocompact/geocompact/engine/spill"
	"github.com/geocompact/geocompact/engine/verify"
	"github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/validate"
)

// rewriteGroup reads group g with its deletes applied, orders its rows
// when the strategy is sort, writes them as g.OutputFiles files of equal
// row counts, and verifies the written files against what was read.
func (ex *execution) rewriteGroup(ctx context.Context, i int, g *Group) *groupOut {
	o := &groupOut{group: g, in: verify.NewDigest(), out: verify.NewDigest()}
	o.files = g.Files
	o.index = i
	ex.progress(i, "reading", 0, 0)
	o.err = ex.rewriteGroupErr(ctx, o)
	ex.progressMu.Lock()
	ex.bytesDone += g.Bytes
	ex.progressMu.Unlock()
	ex.progress(i, "done", 0, 0)
	if o.err != nil {
		o.err = ex.tf.BrokenInput(ctx, o.files, o.err)
		o.err = fmt.Errorf("rewrite group %d (%s): %w", i+1, PartitionLabel(g.Partition), o.err)
		return o
	}
	ex.r.log.Info("rewrite group done", "group", i+1, "partition", g.Partition, "files_in", len(g.Files),
		"files_out", len(o.newFiles), "rows", o.in.Rows)
	return o
}

func (ex *execution) rewriteGroupErr(ctx context.Context, o *groupOut) error {
	if parts := ex.binpackParts(o); len(parts) > 1 {
		return ex.rewriteParts(ctx, o, parts)
	}
	g, recs, err := ex.readGroup(ctx, o, o.files)
	if err != nil {
		return err
	}
	start := time.Now()
	var files []table.OutFile
	switch {
	case ex.r.lay.strategy != Sort:
		files, err = ex.writeStream(ctx, g, recs)
	case o.group.Sort != nil && o.group.Sort.Spill:
		files, err = ex.sortSpilled(ctx, g, recs)
	default:
		files, err = ex.sortInMemory(ctx, g, recs)
	}
	ex.r.log.Debug("rewrite group written", "partition", o.group.Partition, "files", len(files), "duration", time.Since(start))
	return ex.verifyWritten(ctx, o, g, files, err)
}

// verifyWritten records the files written for group o (err is how the
// writing ended) and, when it succeeded, reads them back and checks them
// against the rows read.
func (ex *execution) verifyWritten(ctx context.Context, o *groupOut, g *groupIO, files []table.OutFile, err error) error {
	o.newFiles = files
	if h := hooksOf(ctx); err == nil && h.AfterWrite != nil {
		err = h.AfterWrite()
	}
	if err != nil {
		return err
	}
	ex.progress(o.index, "verifying", 0, 0)
	return ex.verify(ctx, o, g.geom, g.bbox)
}

// readGroup starts reading files (all or some of group o's) at the
// planned version, deletes applied, and returns what reading and writing
// the group needs; g.digest validates a batch and folds it into o.in.
func (ex *execution) readGroup(ctx context.Context, o *groupOut, files []table.PlanFile) (*groupIO, iter.Seq2[arrow.RecordBatch, error], error) {
	return ex.readGroupInto(ctx, o, files, &o.in, 0)
}

// readGroupInto is readGroup folding the rows into in, and counting the
// rows it names in errors from first (the rows of the group before
// files).
func (ex *execution) readGroupInto(ctx context.Context, o *groupOut, files []table.PlanFile, in *verify.Digest, first int64) (*groupIO, iter.Seq2[arrow.RecordBatch, error], error) {
	readSc, recs, err := ex.tf.Read(ctx, o.files, files, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("read: %w", err)
	}
	sc, err := ex.tf.WriteSchema(o.files, readSc)
	if err != nil {
		return nil, nil, err
	}
	g := &groupIO{o: o, readSc: readSc, sc: sc}
	g.geom, g.bbox = verify.Columns(sc, ex.geomName())
	check := ex.geometryCheck(first)
	g.digest = func(rec arrow.RecordBatch) error {
		if err := check(rec); err != nil {
			return err
		}
		return in.Add(rec, g.geom, g.bbox)
	}
	return g, recs, nil
}

// groupIO is what reading and writing one group needs.
type groupIO struct {
	o          *groupOut
	readSc, sc *arrow.Schema // the schema rows are read with, and written with
	geom       int
	bbox       [4]int
	// digest validates a batch read and folds it into o.in.
	digest func(arrow.RecordBatch) error
}

// writeStream writes the rows of recs as they come (binpack): files of
// even row counts, streamed, so memory does not grow with the group.
func (ex *execution) writeStream(ctx context.Context, g *groupIO, recs iter.Seq2[arrow.RecordBatch, error]) ([]table.OutFile, error) {
	sink := ex.newSink(ctx, g.o, g.sc, evenChunks(g.o.group.Records, g.o.group.OutputFiles), sinkQueue)
	err := eachBatch(recs, g.digest, func(rec arrow.RecordBatch) error {
		if err := sink.Write(rec); err != nil {
			return fmt.Errorf("write: %w", err)
		}
		return nil
	})
	return closeSink(sink, err)
}

// eachBatch reads recs, runs check on each batch and hands it to use,
// which owns it from then on. It stops at the first error: a read or
// check error (wrapped as a read error, the batch released) or use's.
func eachBatch(recs iter.Seq2[arrow.RecordBatch, error], check func(arrow.RecordBatch) error, use func(arrow.RecordBatch) error) error {
	for rec, err := range recs {
		if err == nil {
			err = check(rec)
		}
		if err != nil {
			if rec != nil {
				rec.Release()
			}
			return fmt.Errorf("read: %w", err)
		}
		if err := use(rec); err != nil {
			return err
		}
	}
	return nil
}

// sortInMemory reads every row of the group, orders them all by the
// layout's key at once (not per batch) and writes them file by file,
// gathering each file's rows from the input as it goes: besides the
// rows read it holds 12 bytes per row and the batches in flight.
//
// Curve positions are normalised over the group's extent (the union of
// the rows' bboxes, known once every row is read), so the keys depend
// only on the group's rows; sortSpilled learns the same scale.
func (ex *execution) sortInMemory(ctx context.Context, g *groupIO, recs iter.Seq2[arrow.RecordBatch, error]) ([]table.OutFile, error) {
	sorter, err := ex.groupSorter(g, g.readSc)
	if err != nil {
		return nil, err
	}
	stats := sorter.NewStats(int(g.o.group.Records))
	var in []arrow.RecordBatch
	defer func() {
		for _, r := range in {
			r.Release()
		}
	}()
	check := func(rec arrow.RecordBatch) error {
		if err := g.digest(rec); err != nil {
			return err
		}
		return stats.Add(rec)
	}
	if err := eachBatch(recs, check, func(rec arrow.RecordBatch) error { in = append(in, rec); return nil }); err != nil {
		return nil, err
	}
	if g.o.in.Rows == 0 {
		return nil, nil
	}
	start := time.Now()
	frozen, err := sorter.WithScale(stats.Scale(g.o.in.Extent))
	if err != nil {
		return nil, err
	}
	perm, keys, err := frozen.SortedKeys(in)
	if err != nil {
		return nil, fmt.Errorf("sort: %w", err)
	}
	ex.r.log.Debug("rewrite group sorted", "partition", g.o.group.Partition, "rows", len(perm), "duration", time.Since(start))
	ex.progress(g.o.index, "writing", 0, 0)
	fileRows, err := ex.cutSorted(g, frozen, in, perm, keys)
	if err != nil {
		return nil, err
	}
	// Every row is in memory: each lane gathers and writes its own part
	// of the files.
	first, cuts := fileParts(fileRows, int64(len(perm)), ex.lanes)
	sinks := ex.partSinks(ctx, g, fileRows, first)
	cuts = append(append([]int64{0}, cuts...), int64(len(perm)))
	return closeSinks(sinks, writeParts(sinks, func(k int, write func(arrow.RecordBatch) error) error {
		return gatherEach(g.readSc, in, perm[cuts[k]:cuts[k+1]], write)
	}))
}

// writeParts writes the parts of a group's files at once, part k's
// batches into sinks[k]: feed(k, write) hands write (which owns each
// batch) part k's batches. Once a part fails, the others stop at their
// next batch. It returns the first failure.
func writeParts(sinks []table.Sink, feed func(k int, write func(arrow.RecordBatch) error) error) error {
	errs := make([]error, len(sinks))
	var (
		wg     sync.WaitGroup
		failed atomic.Bool
	)
	for k, sink := range sinks {
		wg.Go(func() {
			errs[k] = feed(k, func(rec arrow.RecordBatch) error {
				if failed.Load() {
					rec.Release()
					return errPartStopped
				}
				if err := sink.Write(rec); err != nil {
					return fmt.Errorf("write: %w", err)
				}
				return nil
			})
			if errs[k] != nil {
				failed.Store(true)
			}
		})
	}
	wg.Wait()
	var err error
	for _, e := range errs {
		if e != nil && !errors.Is(e, errPartStopped) {
			err = cmp.Or(err, e)
		}
	}
	return err
}

// errPartStopped ends a part of a group's files once another has failed.
var errPartStopped = errors.New("stopped: another part failed")

// sorter returns a Sorter for the layout's order over schema sc, for a
// group written as files files (STR sizes its slabs by it): the order of
// a distributed job, which --curve auto cannot give (local groups use
// groupSorter).
func (ex *execution) sorter(sc *arrow.Schema, files int) (*cluster.Sorter, error) {
	if ex.r.lay.auto {
		// Only a local rewrite chooses per group; a job's workers sort by one order.
		return nil, ErrAutoDistributed
	}
	return cluster.NewSorter(ex.r.lay.order, sc, cluster.SortOptions{Normalize: ex.r.lay.normalize, Files: max(files, 1), Windows: ex.r.cfg.AutoWindows})
}

// groupSorter returns a Sorter over schema sc for the group g reads: by
// the group's own order (its automatic choice, else the layout's).
func (ex *execution) groupSorter(g *groupIO, sc *arrow.Schema) (*cluster.Sorter, error) {
	return cluster.NewSorter(ex.r.groupOrder(g.o.index), sc, cluster.SortOptions{Normalize: ex.r.lay.normalize, Files: max(g.o.group.OutputFiles, 1), Windows: ex.r.cfg.AutoWindows})
}

// sinkQueue is how many batches each file being written may have queued.
const sinkQueue = 2

// gatherBytes is about how much one gathered batch holds.
const gatherBytes = 8 << 20

// gatherInto writes the rows of in, in perm's order, into sink, gathering
// about gatherBytes at a time.
func gatherInto(sink table.Sink, sc *arrow.Schema, in []arrow.RecordBatch, perm []int32) error {
	return gatherEach(sc, in, perm, func(rec arrow.RecordBatch) error {
		if err := sink.Write(rec); err != nil {
			return fmt.Errorf("write: %w", err)
		}
		return nil
	})
}

// gatherEach hands the rows of in, in perm's order, to write (which owns
// each batch), about gatherBytes at a time.
func gatherEach(sc *arrow.Schema, in []arrow.RecordBatch, perm []int32, write func(arrow.RecordBatch) error) error {
	step := chunkRows(in)
	for lo := 0; lo < len(perm); lo += step {
		rec, err := cluster.Gather(sc, in, perm[lo:min(len(perm), lo+step)], nil)
		if err != nil {
			return fmt.Errorf("sort: %w", err)
		}
		if err := write(rec); err != nil {
			return err
		}
	}
	return nil
}

// chunkRows is how many rows of recs make about gatherBytes.
func chunkRows(recs []arrow.RecordBatch) int {
	var bytes, rows int64
	for _, r := range recs {
		bytes += spill.RecordBytes(r)
		rows += r.NumRows()
	}
	if rows == 0 || bytes == 0 {
		return 1 << 16
	}
	return int(min(max(gatherBytes*rows/bytes, 1<<10), 1<<17))
}

// evenChunks splits rows into n chunks whose sizes differ by at most one
// row (see cuts.Even).
var evenChunks = cuts.Even

// geometryCheck returns a function that validates each batch read from the
// table's geometry column (a no-op for tables without one, or with
// validate-geometry=false), so that nothing malformed is written. Its
// errors count the rows of the group from first on.
func (ex *execution) geometryCheck(first int64) func(arrow.RecordBatch) error {
	none := func(arrow.RecordBatch) error { return nil }
	if !ex.r.opts.ValidateGeometry {
		return none
	}
	cols, props, err := ex.tf.Spatial()
	if err != nil {
		return none // not a spatial table: nothing to validate
	}
	cfg := validate.DefaultConfig()
	cfg.MaxExamples = 3
	cfg.CRS = cols.CRS
	cfg.Props = props
	rows := first
	return func(rec arrow.RecordBatch) error {
		rep := validate.Batch(rec, cols, cfg)
		defer func() { rows += rec.NumRows() }()
		if rep.OK() {
			return nil
		}
		var first string
		for _, f := range rep.Examples {
			if !validate.IsWarning(f.Code) {
				first = fmt.Sprintf("; first at row %d of the group: %s: %s", rows+f.Row, f.Code, f.Detail)
				break
			}
		}
		return &GeometryError{Table: ex.r.name, Violations: rep.Violations(), Codes: rep.Codes(), First: first}
	}
}

// cutSorted chooses the row counts of a sorted group's files: at the
// cells of a layout that decides its cuts (kd's leaves; see
// cluster.Sorter.CutShift), else window-aware cuts (see
// cuts.Blocks.Window) when the rows have spatial columns and
// cut-window-fraction (or the group's CutWindow) is set, else sortedFileRows rows each, the last the
// rest. in and perm are the rows and their sorted order by frozen, keys
// their keys in that order.
func (ex *execution) cutSorted(g *groupIO, frozen *cluster.Sorter, in []arrow.RecordBatch, perm []int32, keys []uint64) (func(int) int64, error) {
	rows, n := int64(len(perm)), g.o.group.OutputFiles
	if runs := cellRuns(frozen); runs != nil {
		runs.Add(keys)
		return runFileRows(runs.Runs(), n), nil
	}
	f := ex.r.opts.CutWindowFraction
	if f <= 0 {
		f = g.o.group.CutWindow
	}
	extent := g.o.in.Extent
	if f <= 0 || n <= 1 || (g.geom < 0 && g.bbox[0] < 0) || extent.IsEmpty() || !ex.r.lay.spatial() {
		per := sortedFileRows(rows, n)
		return func(int) int64 { return per }, nil
	}
	// Only the spatial columns are gathered, in sorted order, block by block.
	cols := []int{g.geom}
	if g.bbox[0] >= 0 {
		cols = g.bbox[:]
	}
	var fields []arrow.Field
	for _, c := range cols {
		fields = append(fields, g.readSc.Field(c))
	}
	psc := arrow.NewSchema(fields, nil)
	proj := make([]arrow.RecordBatch, len(in))
	for i, r := range in {
		pc := make([]arrow.Array, len(cols))
		for k, c := range cols {
			pc[k] = r.Column(c)
		}
		proj[i] = array.NewRecordBatch(psc, pc, r.NumRows())
		defer proj[i].Release()
	}
	pgeom, pbbox := -1, [4]int{0, 1, 2, 3}
	if g.bbox[0] < 0 {
		pgeom, pbbox = 0, [4]int{-1, -1, -1, -1}
	}
	bb := cuts.NewBlocks(rows / int64(n*cuts.BlocksPerCut))
	for lo := 0; lo < len(perm); lo += 1 << 16 {
		rec, err := cluster.Gather(psc, proj, perm[lo:min(len(perm), lo+1<<16)], nil)
		if err != nil {
			return nil, err
		}
		bb.Add(rec, pgeom, pbbox)
		rec.Release()
	}
	side := math.Sqrt(f)
	counts := bb.Window(n, side*extent.Width(), side*extent.Height())
	return func(i int) int64 { return counts[min(i, len(counts)-1)] }, nil
}

// cellRuns returns empty cell counts when s's layout decides where its
// files are cut, else nil.
func cellRuns(s *cluster.Sorter) *cluster.CellRuns {
	if shift, ok := s.CutShift(); ok {
		return cluster.NewCellRuns(shift)
	}
	return nil
}

// runFileRows returns the row count of each file cut at cells of runs rows
// each, in cell order (see cluster.RunFiles), for about n files.
func runFileRows(runs []int64, n int) func(int) int64 {
	counts := cluster.RunFiles(runs, n)
	return func(i int) int64 { return counts[min(i, len(counts)-1)] }
}

// sortedFileRows is the row count of each file but the last when a sorted
// group of rows is written as n files: ceil(rows/n), so the last file is
// at most n-1 rows short of the others.
func sortedFileRows(rows int64, n int) int64 {
	n = max(n, 1)
	return max(1, (rows+int64(n)-1)/int64(n))
}
