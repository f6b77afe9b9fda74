package engine

import (
	"context"
	"fmt"
	"iter"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/geocompact/geocompact/cluster"
	"github.com/geocompact/geocompact/engine/spill"
	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/table"
)

// Sizes of the merged spilled sort, by the group's budget (its share of
// max-group-memory-bytes).
const (
	// maxMergeBatchBytes and minMergeBatchBytes bound how much one
	// batch of a run holds: the merge holds one per run it reads, plus
	// the batches its pending output rows come from.
	maxMergeBatchBytes = 256 << 10
	minMergeBatchBytes = 16 << 10
	// minFanIn and maxFanIn bound how many runs one merge reads at once
	// (two files each). A 10 GB group at the default budget makes about
	// 1,900 runs: batches of about 17 KiB merge them in one pass, where
	// 64 KiB batches, 512 runs to a merge, first merged 73% of the rows
	// into longer runs (docs/perf.md, "10 GB in one group").
	minFanIn = 16
	maxFanIn = 2048
	// maxShrinks is how many merges before the last run at once, when
	// there are lanes for them: their batches take at most half the
	// budget, as two runs do while they are cut.
	maxShrinks = 2
)

// runBudget is the most Arrow bytes one sorted run holds: a run is read
// while the one before it is sorted and written. An eighth of the budget
// rather than a quarter: the last run's sort, which nothing overlaps, is
// shorter, and a 128 MiB sort of 1.5M points peaked at 210-235 MiB of RSS
// instead of 290-295 MiB.
func runBudget(budget int64) int64 {
	return max(budget/8, 64<<10)
}

// mergeSizes returns how large the batches of runs are written (in
// Arrow bytes) and how many runs one merge reads at once, for a budget
// and about runs runs: the merge's batches take at most a quarter of
// the budget (never fewer than minFanIn of them). The batches are as
// large as that quarter allows for every run to be read by one merge,
// between minMergeBatchBytes and maxMergeBatchBytes: smaller batches
// read more runs at once, so fewer rows are merged twice (a 10 GB group
// at a 512 MiB budget makes about 480 runs, which 256 KiB batches merge
// in one pass, where 256 runs to a merge would first write 47% of the
// rows to disk again).
func mergeSizes(budget int64, runs int) (batchBytes int64, fanIn int) {
	quarter := budget / 4
	batchBytes = min(max(quarter/int64(max(runs, 1)), minMergeBatchBytes), maxMergeBatchBytes)
	return batchBytes, int(min(max(quarter/batchBytes, minFanIn), maxFanIn))
}

// mergePlan turns sp, the spilled sort plan of group g by a curve's key,
// into a merge of sorted runs.
func mergePlan(sp *SortPlan, g *Group) {
	arrowBytes := g.Bytes * arrowPerParquetByte
	run := runBudget(sp.BudgetBytes)
	sp.Runs = int(max((arrowBytes+run-1)/run, 2))
	sp.Buckets = 0
	// Two runs (one read, one sorted and written) with their permutation,
	// or the merge's batches: both below half the budget.
	batch, fan := mergeSizes(sp.BudgetBytes, sp.Runs)
	sp.PeakMemoryBytes = min(sp.PeakMemoryBytes, sortOverheadBytes+2*run+int64(fan)*batch)
}

// sortMerged orders a group too large for its memory budget by its
// curve's key through sorted runs on local disk, and writes exactly what
// sortInMemory would (the same rows in the same order in the same files,
// gathered into the same batches):
//
//  1. scale: one pass over only the key and extent columns learns the
//     key's scale (the group's extent, quantiles), so that every row's
//     key is the one the in-memory sort gives it; when the key needs
//     only the extent and the files' statistics give it, they stand in
//     for that pass, and the rows' extent, known once the runs are
//     written, confirms them (else the runs are written again);
//  2. runs: one pass over all rows (deletes applied, validated, digested)
//     cuts them into runs of an eighth of the budget, each sorted stably
//     and written with its keys while the next is read;
//  3. merge: the runs are read back batch by batch and merged by key,
//     equal keys taken from the earlier run first, into the file writers;
//     when there are more runs than one merge reads, only as many as
//     that merge must be spared are first merged into longer runs, two
//     such merges at once on two cores (see spill.Shrinks).
//
// Each run is a stretch of the input in stable key order, and a tie goes
// to the earlier stretch, so the merge is the stable order of the whole
// group: the in-memory sort's.
func (ex *execution) sortMerged(ctx context.Context, g *groupIO, recs iter.Seq2[arrow.RecordBatch, error]) ([]table.OutFile, error) {
	sp := g.o.group.Sort
	sorter, err := ex.spilledSorter(g)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	ex.progress(g.o.index, "scaling", 0, 0)
	frozen, assumed, err := ex.runsScale(ctx, g, sorter)
	if err != nil {
		return nil, fmt.Errorf("scale: %w", err)
	}
	ex.r.log.Debug("spill: scaled", "partition", g.o.group.Partition, "from_file_stats", assumed != nil, "duration", time.Since(start))
	dir, err := ex.openSpillDir()
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	start = time.Now()
	ex.progress(g.o.index, "sorting runs", 0, 0)
	rs := spill.NewRuns(dir, g.readSc)
	rs.BeforeWrite = hooksOf(ctx).SpillWrite
	defer rs.Remove()
	cells := cellRuns(frozen)
	batch, fan := mergeSizes(sp.BudgetBytes, sp.Runs)
	size, err := writeRuns(recs, g, frozen, rs, runBudget(sp.BudgetBytes), batch, cells)
	if err != nil {
		return nil, err
	}
	if g.o.in.Rows == 0 {
		return nil, nil
	}
	if assumed != nil && *assumed != g.o.in.Extent {
		// The files' statistics were not their rows' extent (bounds
		// written wider than the rows, rows whose box has a null or NaN
		// side): the runs are keyed by another scale than the in-memory
		// sort's. Key and write them again by the scale of the rows.
		ex.r.log.Info("spill: the files' bounds are not their rows' extent; sorting the runs again", "partition", g.o.group.Partition,
			"file_extent", *assumed, "rows_extent", g.o.in.Extent)
		rs.Remove()
		_, cells, size, err = ex.rewriteRuns(ctx, g, sorter, rs, batch)
		if err != nil {
			return nil, err
		}
	}
	ex.r.log.Debug("spill: runs written", "partition", g.o.group.Partition, "runs", rs.Len(), "rows", g.o.in.Rows, "spill_bytes", rs.DiskBytes(), "duration", time.Since(start))
	start = time.Now()
	ex.progress(g.o.index, "merging", 0, 0)
	// The merge's parts hold a batch of every run each, as the merges
	// before the last do: at most maxShrinks of them.
	fileRows := ex.spilledFileRows(g, cells)
	first, cuts := fileParts(fileRows, g.o.in.Rows, min(ex.lanes, maxShrinks))
	sinks := ex.partSinks(ctx, g, fileRows, first)
	err = rs.MergeParts(fan, min(ex.lanes, maxShrinks), size.runRows(batch), size.rows(gatherBytes), cuts, func(k int, rec arrow.RecordBatch) error {
		if err := sinks[k].Write(rec); err != nil {
			return fmt.Errorf("write: %w", err)
		}
		return nil
	})
	files, err := closeSinks(sinks, err)
	ex.r.log.Debug("spill: merged and written", "partition", g.o.group.Partition, "files", len(files), "parts", len(sinks), "duration", time.Since(start))
	return files, err
}

// runsScale returns sorter frozen to the scale the runs of g are keyed
// by. When the order needs only the rows' extent (see
// cluster.Sorter.ExtentScale) and the files' statistics give it (see
// fileExtent), no row is read for it, and the extent assumed is returned
// so that the caller can check it against the rows' once they are read;
// else the key columns are read once (sampleKeys) and the extent is nil.
func (ex *execution) runsScale(ctx context.Context, g *groupIO, sorter *cluster.Sorter) (*cluster.Sorter, *spatial.Bound, error) {
	ext, ok := fileExtent(g.o.files)
	if sc, keyed := sorter.ExtentScale(ext); ok && keyed {
		if h := hooksOf(ctx); h.FileExtent != nil {
			ext = h.FileExtent(ext)
			sc, _ = sorter.ExtentScale(ext)
		}
		frozen, err := sorter.WithScale(sc)
		return frozen, &ext, err
	}
	frozen, _, _, err := ex.sampleKeys(ctx, g, sorter, 0)
	return frozen, nil, err
}

// fileExtent is the extent of the rows of files as their statistics give
// it: the union of their bounds, when every file has one and no deletes
// apply to any (a delete may remove the rows that make a bound).
func fileExtent(files []table.PlanFile) (spatial.Bound, bool) {
	ext := spatial.EmptyBound()
	for _, f := range files {
		if f.DeleteFiles > 0 || !f.HasBound {
			return spatial.Bound{}, false
		}
		ext = ext.Extend(f.Bound)
	}
	return ext, !ext.IsEmpty()
}

// rewriteRuns reads the rows of g, already validated and digested, a
// second time and writes them into rs as runs (in batches of about batch
// Arrow bytes) keyed by the scale a pass over their key columns learns
// (sampleKeys): what sortMerged writes when the files' statistics cannot
// stand in for that pass.
func (ex *execution) rewriteRuns(ctx context.Context, g *groupIO, sorter *cluster.Sorter, rs *spill.Runs, batch int64) (*cluster.Sorter, *cluster.CellRuns, rowSize, error) {
	frozen, _, _, err := ex.sampleKeys(ctx, g, sorter, 0)
	if err != nil {
		return nil, nil, rowSize{}, fmt.Errorf("scale: %w", err)
	}
	_, recs, err := ex.tf.Read(ctx, g.o.files, g.o.files, nil)
	if err != nil {
		return nil, nil, rowSize{}, fmt.Errorf("read: %w", err)
	}
	again := *g
	again.digest = func(arrow.RecordBatch) error { return nil }
	cells := cellRuns(frozen)
	size, err := writeRuns(recs, &again, frozen, rs, runBudget(g.o.group.Sort.BudgetBytes), batch, cells)
	return frozen, cells, size, err
}

// rowSize sums the Arrow bytes and rows of the batches read.
type rowSize struct{ bytes, n int64 }

func (s *rowSize) add(rec arrow.RecordBatch) {
	s.bytes += spill.RecordBytes(rec)
	s.n += rec.NumRows()
}

// rows is how many rows make about bytes, as chunkRows counts them over
// the same batches (so the merge gathers the batches the in-memory sort
// gathers).
func (s rowSize) rows(bytes int64) int {
	if s.n == 0 || s.bytes == 0 {
		return 1 << 16
	}
	return int(min(max(bytes*s.n/s.bytes, 1<<10), 1<<17))
}

// runRows is how many rows make about bytes in a batch of a run: as
// rows, but down to 64 rows, so that the merge's batches keep within
// its share of the budget however many runs it reads.
func (s rowSize) runRows(bytes int64) int {
	if s.n == 0 || s.bytes == 0 {
		return 1 << 10
	}
	return int(min(max(bytes*s.n/s.bytes, 64), 1<<17))
}

// writeRuns reads every row of the group, validates and digests it, and
// writes it into runs that hold at most run bytes of memory (the
// capacity of the batches' buffers, not only their length), each sorted
// by frozen and written in batches of about batch Arrow bytes;
// a run is sorted and written while the next is read. cells, when not
// nil, counts the rows' cells. It returns the size of what it read.
func writeRuns(recs iter.Seq2[arrow.RecordBatch, error], g *groupIO, frozen *cluster.Sorter, rs *spill.Runs, run, batchBytes int64, cells *cluster.CellRuns) (rowSize, error) {
	var size rowSize
	todo := make(chan []arrow.RecordBatch, 1)
	done := make(chan error, 1)
	go func() {
		var err error
		for batch := range todo {
			if err == nil {
				err = sortRun(batch, g.readSc, frozen, rs, batchBytes, cells)
			}
			release(batch)
		}
		done <- err
	}()
	var batch []arrow.RecordBatch
	var held int64
	err := eachBatch(recs, g.digest, func(rec arrow.RecordBatch) error {
		size.add(rec)
		batch = append(batch, rec)
		held += spill.HeldBytes(rec)
		if held >= run {
			todo <- batch
			batch, held = nil, 0
		}
		return nil
	})
	if err == nil && len(batch) > 0 {
		todo <- batch
		batch = nil
	}
	release(batch)
	close(todo)
	if werr := <-done; err == nil {
		err = werr
	}
	return size, err
}

// sortRun sorts one run's rows by frozen and writes them as a run, in
// batches of about batchBytes Arrow bytes.
func sortRun(recs []arrow.RecordBatch, sc *arrow.Schema, frozen *cluster.Sorter, rs *spill.Runs, batchBytes int64, cells *cluster.CellRuns) error {
	perm, keys, err := frozen.SortedKeys(recs)
	if err != nil {
		return fmt.Errorf("sort: %w", err)
	}
	if cells != nil {
		cells.Add(keys)
	}
	var size rowSize
	for _, r := range recs {
		size.add(r)
	}
	return rs.Write(recs, perm, keys, size.runRows(batchBytes))
}

func release(recs []arrow.RecordBatch) {
	for _, r := range recs {
		r.Release()
	}
}
