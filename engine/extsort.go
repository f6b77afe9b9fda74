package engine

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/geocompact/geocompact/cluster"
	"github.com/geocompact/geocompact/engine/spill"
	"github.com/geocompact/geocompact/engine/verify"
	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/optval"
)

// SortPlan is how one sorted group is sorted, as a dry run shows it: in
// memory when its estimated peak fits its share of max-group-memory-bytes,
// else by an external sort that spills to local disk: sorted runs merged
// by key for a curve's order, key-range buckets for a linear order.
type SortPlan struct {
	// Spill is true when the group is sorted through spill files.
	Spill bool `json:"spill"`
	// Runs is about how many sorted runs a spilled group by a curve's key
	// is cut into before they are merged.
	Runs int `json:"runs,omitempty"`
	// Buckets is how many key ranges a spilled group by a linear order is
	// scattered into.
	Buckets int `json:"buckets,omitempty"`
	// SpillBytes estimates the local disk the spill files take.
	SpillBytes int64 `json:"spill_bytes,omitempty"`
	// PeakMemoryBytes estimates the group's peak memory.
	PeakMemoryBytes int64 `json:"peak_memory_bytes"`
	// BudgetBytes is the group's share of max-group-memory-bytes.
	BudgetBytes int64 `json:"budget_bytes"`
}

// Planning figures for sorted groups, per byte of Parquet input.
const (
	// arrowPerParquetByte is what an in-memory sort holds live per
	// Parquet byte: measured at 3.3 (263 MB live at most, keys and
	// writers included, for 77 MiB of zstd Parquet, 1.5M generated
	// points with bbox doubles, read in batches of the files' rows; 5.2
	// when batches were 131,072 rows whatever the files held).
	arrowPerParquetByte = 3
	// gcHeadroom is how far Go's collector lets the heap grow past the
	// live data between collections (GOGC=100): the in-memory sort of
	// those points peaked at 570-600 MiB of RSS (the estimate: 584 MB).
	gcHeadroom = 2
	// spillPerParquetByte is Arrow IPC on disk per Parquet byte:
	// measured at 1.3 for LZ4 buckets (205 MB of spill for 155 MiB of
	// Parquet) and 1.6 for uncompressed runs (128 MB for 77 MiB); 2 leaves
	// room for the free-space check.
	spillPerParquetByte = 2
	// sortOverheadBytes covers what a group holds besides its rows: the
	// scan's read-ahead, gathered batches in flight and the writers'
	// buffers.
	sortOverheadBytes = 64 << 20
	// maxBuckets bounds the spill files open at once per group.
	maxBuckets = 4096
)

// planSorts decides, for every group of a sorted plan, whether it sorts in
// memory or spills, and how.
func (r *rewriter) planSorts(p *Plan, concurrency int) {
	if r.lay.strategy != Sort {
		return
	}
	budget := r.opts.MaxGroupMemoryBytes / int64(max(1, min(concurrency, len(p.Groups))))
	for i := range p.Groups {
		sp := sortPlanFor(&p.Groups[i], budget)
		if sp.Spill && r.groupOrder(i).Curve != cluster.CurveLinear {
			mergePlan(sp, &p.Groups[i])
		}
		p.Groups[i].Sort = sp
	}
}

func sortPlanFor(g *Group, budget int64) *SortPlan {
	arrowBytes := g.Bytes * arrowPerParquetByte
	peak := gcHeadroom*(arrowBytes+12*g.Records) + sortOverheadBytes
	sp := &SortPlan{PeakMemoryBytes: peak, BudgetBytes: budget}
	if peak <= budget {
		return sp
	}
	unit := unitBudget(budget)
	sp.Spill = true
	// Twice as many buckets as units: neighbours merge into one sort
	// unit when the data turns out smaller than estimated or skewed.
	sp.Buckets = int(min(max(2*((arrowBytes+unit-1)/unit), 2), maxBuckets))
	sp.SpillBytes = g.Bytes * spillPerParquetByte
	sp.PeakMemoryBytes = min(peak, sortOverheadBytes+3*unit+scatterBuffer(budget))
	return sp
}

// unitBudget is the most Arrow bytes one sort unit of a spilled group may
// load: two units are held at once (one being written, one sorted ahead).
func unitBudget(budget int64) int64 {
	return max((budget-sortOverheadBytes)/3, 1<<20)
}

// scatterBuffer is how many bytes of rows scattering buffers before it
// writes the largest bucket's rows to disk.
func scatterBuffer(budget int64) int64 {
	return min(max(budget/4, 1<<20), 64<<20)
}

// checkSpill fails before anything is read when the spill directory is
// missing, unwritable or too small for the spilled groups that may run at
// once.
func (r *rewriter) checkSpill(ctx context.Context, p *Plan, concurrency int) error {
	var sizes []int64
	for _, g := range p.Groups {
		if g.Sort != nil && g.Sort.Spill {
			sizes = append(sizes, g.Sort.SpillBytes)
		}
	}
	if len(sizes) == 0 {
		return nil
	}
	slices.Sort(sizes)
	var need int64
	for _, s := range sizes[max(0, len(sizes)-concurrency):] {
		need += s
	}
	root := spill.Root(r.opts.SpillDir)
	d, _, err := spill.OpenDir(root)
	if err != nil {
		return err
	}
	d.Close()
	free, err := hooksOf(ctx).freeSpace(root)
	if err != nil {
		return fmt.Errorf("%w: free space of %s: %w", spill.ErrDir, root, err)
	}
	if free >= 0 && need > free {
		return fmt.Errorf("%w: the sort spills about %s to %s, which has %s free; nothing was written: point the %s option or %s at a larger local disk, or raise %s",
			spill.ErrDir, optval.FormatBytes(need), root, optval.FormatBytes(free), OptSpillDir, spill.EnvDir, OptMaxGroupMemory)
	}
	return nil
}

// sortSpilled orders a group too large for its memory budget by merging
// sorted runs (sortMerged, for a curve's key), or by a range-partitioned
// external sort (for a linear order), and writes exactly what sortInMemory
// would (the same rows in the same files in the same order):
//
//  1. sample: one pass over only the key and extent columns learns the
//     key's scale (the group's extent, quantiles) and samples keys, whose
//     quantiles become bucket boundaries;
//  2. scatter: one pass over all rows (deletes applied, validated,
//     digested) keys each row and appends it to its bucket's spill file;
//  3. sort and write: buckets, in key order and merged into units that
//     fit the budget, are loaded, sorted (the unit after the one being
//     written is sorted meanwhile) and gathered into one stream of files
//     cut at the same row counts as the in-memory sort.
//
// Equal keys always fall in one bucket, and each bucket keeps input
// order, so the stable order within buckets is the global stable order.
func (ex *execution) sortSpilled(ctx context.Context, g *groupIO, recs iter.Seq2[arrow.RecordBatch, error]) ([]table.OutFile, error) {
	sp := g.o.group.Sort
	if sp.Runs > 0 {
		return ex.sortMerged(ctx, g, recs)
	}
	sorter, err := ex.spilledSorter(g)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	ex.progress(g.o.index, "sampling", 0, 0)
	frozen, bounds, _, err := ex.sampleKeys(ctx, g, sorter, sp.Buckets)
	if err != nil {
		return nil, fmt.Errorf("sample: %w", err)
	}
	ex.r.log.Debug("spill: sampled", "partition", g.o.group.Partition, "buckets", len(bounds)+1, "duration", time.Since(start))
	dir, err := ex.openSpillDir()
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	start = time.Now()
	ex.progress(g.o.index, "scattering", 0, 0)
	bf := spill.NewBuckets(dir, g.readSc, len(bounds)+1)
	bf.BeforeWrite = hooksOf(ctx).SpillWrite
	runs := cellRuns(frozen)
	if err := scatter(recs, g, frozen, bounds, bf, scatterBuffer(sp.BudgetBytes), runs); err != nil {
		return nil, err
	}
	ex.r.log.Debug("spill: scattered", "partition", g.o.group.Partition, "rows", g.o.in.Rows, "spill_bytes", bf.DiskBytes(), "duration", time.Since(start))
	start = time.Now()
	sink := ex.spilledSink(ctx, g, runs)
	err = ex.sortUnits(ctx, g, frozen, bf, unitBudget(sp.BudgetBytes), sink)
	files, err := closeSink(sink, err)
	ex.r.log.Debug("spill: sorted and written", "partition", g.o.group.Partition, "files", len(files), "duration", time.Since(start))
	return files, err
}

// spilledSorter returns the Sorter of a group sorted through spill files,
// warning that cut-window-fraction does not apply to such a group.
func (ex *execution) spilledSorter(g *groupIO) (*cluster.Sorter, error) {
	if ex.r.opts.CutWindowFraction > 0 {
		ex.r.log.Warn("cut-window-fraction is not applied to a spilled group: its files are cut at equal row counts", "partition", g.o.group.Partition)
	}
	return ex.groupSorter(g, g.readSc)
}

// spilledSink returns the sink of a group sorted through spill files: its
// files end at the cells of runs when the layout decides where files are
// cut (runs is not nil), else at equal row counts.
func (ex *execution) spilledSink(ctx context.Context, g *groupIO, runs *cluster.CellRuns) table.Sink {
	return ex.newSink(ctx, g.o, g.sc, ex.spilledFileRows(g, runs), sinkQueue)
}

// spilledFileRows is the row count of each file of a group sorted
// through spill files (see spilledSink).
func (ex *execution) spilledFileRows(g *groupIO, runs *cluster.CellRuns) func(int) int64 {
	if runs != nil {
		return runFileRows(runs.Runs(), g.o.group.OutputFiles)
	}
	per := sortedFileRows(g.o.in.Rows, g.o.group.OutputFiles)
	return func(int) int64 { return per }
}

// sampleKeys reads the key and extent columns of the group once, and
// returns a Sorter over the full rows frozen to the group's scale, and
// the boundaries of up to buckets key ranges, and the scale itself.
func (ex *execution) sampleKeys(ctx context.Context, g *groupIO, sorter *cluster.Sorter, buckets int) (*cluster.Sorter, []uint64, cluster.Scale, error) {
	cols := sorter.Columns()
	if g.bbox[0] >= 0 {
		for _, c := range g.bbox {
			cols = append(cols, g.sc.Field(c).Name)
		}
	} else if g.geom >= 0 {
		cols = append(cols, g.sc.Field(g.geom).Name)
	}
	slices.Sort(cols)
	cols = slices.Compact(cols)
	psc, recs, err := ex.tf.Read(ctx, g.o.files, g.o.files, cols)
	if err != nil {
		return nil, nil, cluster.Scale{}, err
	}
	proj, err := ex.groupSorter(g, psc)
	if err != nil {
		return nil, nil, cluster.Scale{}, err
	}
	pgeom, pbbox := verify.Columns(psc, ex.geomName())
	expected := int(max(g.o.group.Records, 1))
	stats := proj.NewStats(expected)
	stride := max(1, expected/min(max(256*buckets, 1<<14), 1<<20))

	extent := spatial.EmptyBound()
	var sample []arrow.RecordBatch
	defer func() {
		for _, r := range sample {
			r.Release()
		}
	}()
	var seen int
	err = eachBatch(recs, stats.Add, func(rec arrow.RecordBatch) error {
		defer rec.Release()
		extent = extent.Extend(verify.Extent(rec, pgeom, pbbox))
		var idx []int32
		for i := (stride - seen%stride) % stride; buckets > 0 && i < int(rec.NumRows()); i += stride {
			idx = append(idx, int32(i))
		}
		seen += int(rec.NumRows())
		if len(idx) == 0 {
			return nil
		}
		s, err := cluster.Gather(psc, []arrow.RecordBatch{rec}, idx, nil)
		if err == nil {
			sample = append(sample, s)
		}
		return err
	})
	if err != nil {
		return nil, nil, cluster.Scale{}, err
	}
	scale := stats.Scale(extent)
	frozen, err := sorter.WithScale(scale)
	if err != nil {
		return nil, nil, cluster.Scale{}, err
	}
	fproj, err := proj.WithScale(scale)
	if err != nil {
		return nil, nil, cluster.Scale{}, err
	}
	var keys []uint64
	for _, s := range sample {
		k, err := fproj.Keys(s)
		if err != nil {
			return nil, nil, cluster.Scale{}, err
		}
		keys = append(keys, k...)
	}
	return frozen, spill.Boundaries(keys, buckets), scale, nil
}

// scatter reads every row of the group, validates and digests it, and
// appends it to its bucket's spill files, buffering up to bufBytes of
// rows in memory. runs, when not nil, counts the rows' cells.
func scatter(recs iter.Seq2[arrow.RecordBatch, error], g *groupIO, frozen *cluster.Sorter, bounds []uint64, bf *spill.Buckets, bufBytes int64, runs *cluster.CellRuns) error {
	k := len(bounds) + 1
	buf := make([][]arrow.RecordBatch, k)
	held := make([]int64, k)
	var total int64
	defer func() {
		for _, b := range buf {
			for _, r := range b {
				r.Release()
			}
		}
	}()
	flush := func(b int) error {
		err := bf.Write(b, buf[b])
		for _, r := range buf[b] {
			r.Release()
		}
		buf[b], total, held[b] = nil, total-held[b], 0
		return err
	}
	counts := make([]int32, k+1)
	err := eachBatch(recs, g.digest, func(rec arrow.RecordBatch) error {
		keys, err := frozen.Keys(rec)
		if err != nil {
			rec.Release()
			return fmt.Errorf("key: %w", err)
		}
		if runs != nil {
			runs.Add(keys)
		}
		grouped, err := spill.GroupByBucket(rec, g.readSc, keys, bounds, counts)
		n := rec.NumRows()
		rec.Release()
		if err != nil {
			return err
		}
		perRow := spill.RecordBytes(grouped) / max(n, 1)
		for b := range k {
			lo, hi := int64(counts[b]), int64(counts[b+1])
			if lo == hi {
				continue
			}
			buf[b] = append(buf[b], grouped.NewSlice(lo, hi))
			held[b] += (hi - lo) * perRow
			total += (hi - lo) * perRow
		}
		grouped.Release()
		for total > bufBytes {
			if err := flush(argmax(held)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for b := range k {
		if len(buf[b]) > 0 {
			if err := flush(b); err != nil {
				return err
			}
		}
	}
	return nil
}

func argmax(xs []int64) int {
	best := 0
	for i, x := range xs {
		if x > xs[best] {
			best = i
		}
	}
	return best
}

// sortUnits loads the buckets in key order, merged into units of at most
// unit Arrow bytes, sorts each and writes it into sink; the next unit is
// loaded and sorted while the current one is written.
func (ex *execution) sortUnits(ctx context.Context, g *groupIO, frozen *cluster.Sorter, bf *spill.Buckets, unit int64, sink table.Sink) error {
	type sorted struct {
		recs []arrow.RecordBatch
		perm []int32
		err  error
	}
	release := func(s sorted) {
		for _, r := range s.recs {
			r.Release()
		}
	}
	units := spill.Units(bf.Bytes(), unit)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch := make(chan sorted)
	go func() {
		defer close(ch)
		for i, u := range units {
			var s sorted
			for b := u[0]; b < u[1] && s.err == nil; b++ {
				var recs []arrow.RecordBatch
				recs, s.err = bf.Read(b)
				s.recs = append(s.recs, recs...)
				bf.Remove(b)
			}
			if s.err == nil {
				s.perm, s.err = frozen.Permutation(s.recs)
			}
			ex.r.log.Debug("spill: unit sorted", "partition", g.o.group.Partition, "unit", i+1, "units", len(units), "rows", len(s.perm))
			ex.progress(g.o.index, "sorting", i+1, len(units))
			select {
			case ch <- s:
			case <-ctx.Done():
				release(s)
				return
			}
		}
	}()
	var err error
	for s := range ch {
		if err == nil {
			err = s.err
		}
		if err == nil {
			err = gatherInto(sink, g.readSc, s.recs, s.perm)
		}
		release(s)
		if err != nil {
			cancel()
		}
	}
	return err
}

// openSpillDir opens this run's spill directory under the configured root,
// logging the abandoned directories of killed runs it removed on the way.
func (ex *execution) openSpillDir() (*spill.Dir, error) {
	dir, removed, err := spill.OpenDir(spill.Root(ex.r.opts.SpillDir))
	if err != nil {
		return nil, err
	}
	for _, p := range removed {
		ex.r.log.Info("removed an abandoned spill directory", "path", p)
	}
	return dir, nil
}
