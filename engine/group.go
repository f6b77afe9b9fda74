package engine

import (
	"context"
	"fmt"
	"iter"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/validate"
)

// rewriteGroup reads group g with its deletes applied, orders its rows
// when the strategy is sort, writes them as g.OutputFiles files of equal
// row counts, and verifies the written files against what was read.
func (ex *execution) rewriteGroup(ctx context.Context, i int, g *Group) *groupOut {
	o := &groupOut{group: g, in: NewDigest(), out: NewDigest()}
	for _, f := range g.Files {
		o.tasks = append(o.tasks, *f.task)
	}
	o.err = ex.rewriteGroupErr(ctx, o)
	if o.err != nil {
		o.err = nameBrokenInput(ctx, ex.tbl, o.tasks, o.err)
		o.err = fmt.Errorf("rewrite group %d (%s): %w", i+1, PartitionLabel(g.Partition), o.err)
		return o
	}
	ex.r.log.Info("rewrite group done", "group", i+1, "partition", g.Partition, "files_in", len(g.Files),
		"files_out", len(o.newFiles), "rows", o.in.Rows)
	return o
}

func (ex *execution) rewriteGroupErr(ctx context.Context, o *groupOut) error {
	scanOpts, writeOpts, lineage := ex.ioOptions(o.tasks)
	scan := ex.tbl.Scan(append(scanOpts, table.WithSnapshotID(ex.snapshotID))...)
	readSc, recs, err := scan.ReadTasks(ctx, o.tasks)
	if err != nil {
		return fmt.Errorf("read: %w", err)
	}
	sc := readSc // the schema the writer checks; with lineage it carries field IDs
	if lineage != nil {
		if sc, err = table.SchemaToArrowSchemaWithOptions(lineage, table.ArrowSchemaOptions{IncludeFieldIDs: true, TableProperties: ex.tbl.Properties()}); err != nil {
			return fmt.Errorf("lineage schema: %w", err)
		}
	}
	geom, bbox := spatialColumns(sc, spatialGeomName(ex.tbl))
	check := ex.geometryCheck()
	digest := func(rec arrow.RecordBatch) error {
		if err := check(rec); err != nil {
			return err
		}
		return o.in.Add(rec, geom, bbox)
	}

	var src iter.Seq2[arrow.RecordBatch, error]
	rows := o.group.Records
	var chunks func(int) int64
	start := time.Now()
	if ex.r.lay.strategy == Sort {
		sorted, n, err := ex.sortGroup(readSc, recs, digest, func() spatial.Bound { return o.in.Extent }, o.group.OutputFiles)
		if err != nil {
			return err
		}
		defer func() {
			for _, r := range sorted {
				r.Release()
			}
		}()
		rows = n
		ex.r.log.Debug("rewrite group read and sorted", "partition", o.group.Partition, "rows", n, "duration", time.Since(start))
		chunks = ex.cutSorted(sorted, rows, o.group.OutputFiles, geom, bbox, o.in.Extent)
		src = func(yield func(arrow.RecordBatch, error) bool) {
			for _, r := range sorted {
				r.Retain()
				if !yield(r, nil) {
					return
				}
			}
		}
	} else {
		src = func(yield func(arrow.RecordBatch, error) bool) {
			for rec, err := range recs {
				if err == nil {
					err = digest(rec)
				}
				if err != nil {
					if rec != nil {
						rec.Release()
					}
					yield(nil, err)
					return
				}
				if !yield(rec, nil) {
					return
				}
			}
		}
	}
	if chunks == nil {
		chunks = evenChunks(rows, o.group.OutputFiles)
	}
	files, err := ex.writeChunks(ctx, sc, src, chunks, writeOpts)
	ex.r.log.Debug("rewrite group written", "partition", o.group.Partition, "files", len(files), "duration", time.Since(start))
	o.newFiles = files
	if err == nil && testHookAfterWrite != nil {
		err = testHookAfterWrite()
	}
	if err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return ex.verify(ctx, o, scanOpts, geom, bbox)
}

// ioOptions returns the scan and write options for a group: on a v3 table
// whose files all carry row lineage, _row_id and
// _last_updated_sequence_number are read and written as they are.
func (ex *execution) ioOptions(tasks []table.FileScanTask) ([]table.ScanOption, []table.WriteRecordOption, *iceberg.Schema) {
	write := []table.WriteRecordOption{table.WithClusteredWrite()}
	if ex.tbl.Metadata().Version() < 3 {
		return nil, write, nil
	}
	for _, t := range tasks {
		if t.FirstRowID == nil {
			return nil, write, nil
		}
	}
	lineage := iceberg.SchemaWithRowLineage(ex.tbl.Schema())
	return []table.ScanOption{table.WithRowLineage()}, append(write, table.WithPreserveRowLineage(lineage)), lineage
}

// evenChunks splits rows into n chunks whose sizes differ by at most one
// row; chunk(i) is the size of the i-th. Past the n-th chunk (when the
// estimate of rows was low) chunks keep the last size.
func evenChunks(rows int64, n int) func(i int) int64 {
	rows, k := max(rows, 1), int64(max(n, 1))
	return func(i int) int64 {
		j := min(int64(i), k-1)
		return max(rows*(j+1)/k-rows*j/k, 1)
	}
}

// writeChunks writes the rows of src as files of chunk(0), chunk(1), ...
// rows, through one WriteRecords call: each chunk is gathered into a single
// record batch, and with a target size of one byte iceberg-go's rolling
// writer closes the file after every batch, so one batch is one file.
// src's batches are released here; the writer releases the chunks.
func (ex *execution) writeChunks(ctx context.Context, sc *arrow.Schema, src iter.Seq2[arrow.RecordBatch, error], chunkRows func(int) int64, opts []table.WriteRecordOption) ([]iceberg.DataFile, error) {
	var srcErr error
	chunks := func(yield func(arrow.RecordBatch, error) bool) {
		var parts []arrow.RecordBatch
		var have int64
		c := 0
		release := func() {
			for _, p := range parts {
				p.Release()
			}
			parts, have = nil, 0
		}
		defer release()
		emit := func() bool {
			rec, err := concatBatches(sc, parts)
			release()
			if err != nil {
				srcErr = err
				yield(nil, err)
				return false
			}
			c++
			return yield(rec, nil)
		}
		for rec, err := range src {
			if err != nil {
				srcErr = err
				yield(nil, err)
				return
			}
			for off := int64(0); off < rec.NumRows(); {
				take := min(chunkRows(c)-have, rec.NumRows()-off)
				parts = append(parts, rec.NewSlice(off, off+take))
				off += take
				if have += take; have == chunkRows(c) && !emit() {
					rec.Release()
					return
				}
			}
			rec.Release()
		}
		if have > 0 {
			emit()
		}
	}
	files, err := ex.writeLanes(ctx, sc, chunks, append(opts, table.WithTargetFileSize(1)))
	if err == nil {
		err = srcErr
	}
	return files, err
}

// writeLanes writes each batch of chunks as one file, with up to
// ex.lanes WriteRecords calls at once: compressing Parquet is most of a
// rewrite's work, and the files of a group are independent. Each file
// keeps its rows in chunk order.
func (ex *execution) writeLanes(ctx context.Context, sc *arrow.Schema, chunks iter.Seq2[arrow.RecordBatch, error], opts []table.WriteRecordOption) ([]iceberg.DataFile, error) {
	lanes := max(1, ex.lanes)
	if lanes == 1 {
		var files []iceberg.DataFile
		for df, err := range table.WriteRecords(ctx, ex.tbl, sc, chunks, opts...) {
			if err != nil {
				return files, err
			}
			files = append(files, df)
		}
		return files, nil
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// Files go to the lanes in turn, so a lane that reads ahead cannot
	// take them all.
	chans := make([]chan arrow.RecordBatch, lanes)
	for i := range chans {
		chans[i] = make(chan arrow.RecordBatch)
	}
	var (
		mu       sync.Mutex
		files    []iceberg.DataFile
		firstErr error
		wg       sync.WaitGroup
	)
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if firstErr == nil {
			firstErr = err
			cancel(err)
		}
	}
	for _, ch := range chans {
		wg.Go(func() {
			lane := func(yield func(arrow.RecordBatch, error) bool) {
				for rec := range ch {
					if !yield(rec, nil) {
						return
					}
				}
			}
			for df, err := range table.WriteRecords(ctx, ex.tbl, sc, lane, opts...) {
				if err != nil {
					fail(err)
					break
				}
				mu.Lock()
				files = append(files, df)
				mu.Unlock()
			}
			for rec := range ch { // a failed lane drains, so the producer never blocks
				rec.Release()
			}
		})
	}
	i := 0
	for rec, err := range chunks {
		if err != nil {
			fail(err)
			break
		}
		select {
		case chans[i%lanes] <- rec:
		case <-ctx.Done():
			rec.Release()
		}
		i++
		if ctx.Err() != nil {
			break
		}
	}
	for _, ch := range chans {
		close(ch)
	}
	wg.Wait()
	return files, firstErr
}

// concatBatches gathers parts into one record batch with schema sc.
func concatBatches(sc *arrow.Schema, parts []arrow.RecordBatch) (arrow.RecordBatch, error) {
	if len(parts) == 1 {
		parts[0].Retain()
		return parts[0], nil
	}
	cols := make([]arrow.Array, sc.NumFields())
	var rows int64
	for _, p := range parts {
		rows += p.NumRows()
	}
	for i := range cols {
		arrs := make([]arrow.Array, len(parts))
		for k, p := range parts {
			arrs[k] = p.Column(i)
		}
		col, err := array.Concatenate(arrs, memory.DefaultAllocator)
		if err != nil {
			for _, c := range cols[:i] {
				c.Release()
			}
			return nil, fmt.Errorf("gather rows: %w", err)
		}
		cols[i] = col
	}
	rec := array.NewRecordBatch(parts[0].Schema(), cols, rows)
	for _, c := range cols {
		c.Release()
	}
	return rec, nil
}

// geometryCheck returns a function that validates each batch read from the
// table's geometry column (a no-op for tables without one, or with
// validate-geometry=false), so that nothing malformed is written.
func (ex *execution) geometryCheck() func(arrow.RecordBatch) error {
	none := func(arrow.RecordBatch) error { return nil }
	if !ex.r.opts.ValidateGeometry {
		return none
	}
	cols, err := spatial.DiscoverTableColumns(ex.tbl.Schema(), ex.tbl.Properties(), "")
	if err != nil {
		return none // not a spatial table: nothing to validate
	}
	cfg := validate.DefaultConfig()
	cfg.MaxExamples = 3
	cfg.CRS = cols.CRS
	cfg.Props = ex.tbl.Properties()
	var rows int64
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
		return fmt.Errorf("%w: %d geometry violations (%s)%s; nothing was written or committed: run geocompact validate --table %s, or pass --option %s=false to compact it as it is",
			ErrInvalidData, rep.Violations(), strings.Join(rep.Codes(), ", "), first, ex.r.name, OptValidateGeometry)
	}
}

// cutSorted chooses the row counts of a sorted group's files: window-aware
// cuts (see windowCuts) when the rows have spatial columns and
// cut-window-fraction is set, else the sorted batches as they are: each
// holds sortedFileRows rows, the last the rest, so each is one file and
// needs no copying.
func (ex *execution) cutSorted(sorted []arrow.RecordBatch, rows int64, n, geom int, bbox [4]int, extent spatial.Bound) func(int) int64 {
	f := ex.r.opts.CutWindowFraction
	if f <= 0 || n <= 1 || (geom < 0 && bbox[0] < 0) || extent.IsEmpty() || !ex.r.lay.spatial() {
		per := sortedFileRows(rows, n)
		return func(int) int64 { return per }
	}
	bb := &blockBounds{blockRows: max(1, rows/int64(n*cutBlocksPerCut))}
	for _, r := range sorted {
		bb.add(r, geom, bbox)
	}
	side := math.Sqrt(f)
	cuts := windowCuts(bb, n, side*extent.Width(), side*extent.Height())
	return func(i int) int64 { return cuts[min(i, len(cuts)-1)] }
}

// sortedFileRows is the row count of each file but the last when a sorted
// group of rows is written as n files: ceil(rows/n), so the last file is
// at most n-1 rows short of the others.
func sortedFileRows(rows int64, n int) int64 {
	n = max(n, 1)
	return max(1, (rows+int64(n)-1)/int64(n))
}
