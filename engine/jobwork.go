package engine

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/geocompact/geocompact/cluster"
	"github.com/geocompact/geocompact/engine/spill"
)

// Fragment is the rows one bucket holds of a file that spans a bucket
// boundary. WriteSpanning writes the file from its fragments in bucket
// order.
type Fragment struct {
	// File is the file's index in its group's output.
	File int
	// Bucket orders the fragments of one file.
	Bucket int
	Rows   arrow.RecordBatch
}

// BucketOutput is what WriteBucket wrote and left over.
type BucketOutput struct {
	// Files are the files wholly inside the bucket's rows, in order.
	Files []iceberg.DataFile
	// Out is the digest of Files as read back.
	Out Digest
	// Fragments are the bucket's rows of files that span its boundaries
	// (at most two: the head and the tail), in file order.
	Fragments []Fragment
}

// group returns a groupOut for group i of the job (the plan's view of it
// is rebuilt from the job's own fields).
func (j *Job) group(i int) (*groupOut, *JobGroup, error) {
	if j.ex == nil {
		return nil, nil, fmt.Errorf("job %s is not open", j.ID)
	}
	if i < 0 || i >= len(j.Groups) {
		return nil, nil, fmt.Errorf("job %s has no group %d", j.ID, i)
	}
	jg := &j.Groups[i]
	g := &Group{Partition: jg.Partition, Records: jg.Records, OutputFiles: jg.OutputFiles}
	return j.groupOut(i, g), jg, nil
}

// frozen returns the sorter that keys group jg's rows with its scale.
func (j *Job) frozen(sc *arrow.Schema, jg *JobGroup) (*cluster.Sorter, error) {
	s, err := j.ex.sorter(sc, jg.OutputFiles)
	if err != nil {
		return nil, err
	}
	return s.WithScale(*jg.Scale)
}

// ScatterFile reads the data file at path of group group (its deletes
// applied), validates and digests its rows, and hands them to emit cut
// by bucket (emit owns each batch). It returns the digest of the rows
// read.
func (j *Job) ScatterFile(ctx context.Context, group int, path string, emit func(bucket int, rec arrow.RecordBatch) error) (Digest, error) {
	o, jg, err := j.group(group)
	if err != nil {
		return Digest{}, err
	}
	pos := slices.Index(jg.Files, path)
	if pos < 0 {
		return Digest{}, fmt.Errorf("data file %s is not in group %d of job %s", path, group, j.ID)
	}
	g, recs, err := j.ex.readGroup(ctx, o, []table.FileScanTask{*j.tasks[path]})
	if err != nil {
		return Digest{}, err
	}
	var frozen *cluster.Sorter
	if jg.Scale != nil {
		if frozen, err = j.frozen(g.readSc, jg); err != nil {
			return Digest{}, err
		}
	}
	counts := make([]int32, jg.Buckets+1)
	for rec, err := range recs {
		if err == nil {
			err = g.digest(rec)
		}
		if err == nil {
			err = j.scatterBatch(rec, g, frozen, jg, pos, counts, emit)
		}
		if rec != nil {
			rec.Release()
		}
		if err != nil {
			return Digest{}, fmt.Errorf("scatter %s: %w", path, nameBrokenInput(ctx, j.ex.tbl, o.tasks[pos:pos+1], err))
		}
	}
	return o.in, nil
}

func (j *Job) scatterBatch(rec arrow.RecordBatch, g *groupIO, frozen *cluster.Sorter, jg *JobGroup, pos int, counts []int32, emit func(int, arrow.RecordBatch) error) error {
	if frozen == nil { // binpack: the file is its bucket
		rec.Retain()
		return emit(pos, rec)
	}
	grouped, err := spill.GroupByBucket(rec, g.readSc, frozen, jg.Bounds, counts)
	if err != nil {
		return err
	}
	defer grouped.Release()
	for b := range jg.Buckets {
		if lo, hi := int64(counts[b]), int64(counts[b+1]); lo < hi {
			if err := emit(b, grouped.NewSlice(lo, hi)); err != nil {
				return err
			}
		}
	}
	return nil
}

// fileStarts returns the first row of every output file of group jg
// holding rows rows in all, and a last entry equal to rows: the cuts the
// local engine makes (equal counts for a sorted group, even chunks of
// the planned count for binpack).
func (j *Job) fileStarts(jg *JobGroup, rows int64) []int64 {
	fileRows := evenChunks(jg.Records, jg.OutputFiles)
	if jg.Scale != nil {
		per := sortedFileRows(rows, jg.OutputFiles)
		fileRows = func(int) int64 { return per }
	}
	starts := []int64{0}
	for i := 0; starts[i] < rows; i++ {
		starts = append(starts, min(rows, starts[i]+fileRows(i)))
	}
	return starts
}

// WriteBucket orders bucket bucket of group group (recs, in input order:
// by file, then as read), and writes the files that lie wholly inside its
// rows, which are rows [firstRow, firstRow+rows of recs) of the group's
// groupRows. Rows of files that cross the bucket's edges come back as
// fragments for WriteSpanning.
func (j *Job) WriteBucket(ctx context.Context, group, bucket int, firstRow, groupRows int64, recs []arrow.RecordBatch) (*BucketOutput, error) {
	o, jg, err := j.group(group)
	if err != nil {
		return nil, err
	}
	g, _, err := j.ex.readGroup(ctx, o, nil)
	if err != nil {
		return nil, err
	}
	perm, err := j.bucketOrder(g, jg, recs)
	if err != nil {
		return nil, err
	}
	starts := j.fileStarts(jg, groupRows)
	end := firstRow + int64(len(perm))
	// Files k0..k1-1 lie wholly inside [firstRow, end).
	k0, _ := slices.BinarySearch(starts, firstRow)
	k1 := k0
	for k1+1 < len(starts) && starts[k1+1] <= end {
		k1++
	}
	sink := j.ex.newSink(ctx, g.sc, g.writeOpts, func(i int) int64 { return starts[k0+i+1] - starts[k0+i] }, sinkQueue)
	sink.writeID = j.writeID
	out := &BucketOutput{Out: NewDigest()}
	frags := map[int][]arrow.RecordBatch{}
	cut := &rowCutter{starts: starts, pos: firstRow, full: func(k int) bool { return k >= k0 && k < k1 }}
	err = gatherEach(g.readSc, recs, perm, func(rec arrow.RecordBatch) error {
		return cut.write(rec, sink, frags)
	})
	files, cerr := sink.Close()
	out.Files = files
	if err == nil && cerr != nil {
		err = fmt.Errorf("write: %w", cerr)
	}
	if err == nil {
		err = j.ex.readBack(ctx, files, g.scanOpts, g.geom, g.bbox, &out.Out)
	}
	for _, k := range slices.Sorted(maps.Keys(frags)) {
		rec, cerr := concatBatches(g.readSc, frags[k])
		if cerr != nil && err == nil {
			err = cerr
		}
		if rec != nil {
			out.Fragments = append(out.Fragments, Fragment{File: k, Bucket: bucket, Rows: rec})
		}
	}
	if err != nil {
		return out, fmt.Errorf("write bucket %d of group %d: %w", bucket, group+1, err)
	}
	return out, nil
}

// bucketOrder is the order of a bucket's rows: sorted for a sorted group
// (stable, so equal keys keep input order), as they are for binpack.
func (j *Job) bucketOrder(g *groupIO, jg *JobGroup, recs []arrow.RecordBatch) ([]int32, error) {
	if jg.Scale != nil {
		frozen, err := j.frozen(g.readSc, jg)
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

// rowCutter sends a stream of rows, starting at global row pos, either to
// a sink (rows of files full reports true for) or to fragments by file.
type rowCutter struct {
	starts []int64
	pos    int64
	full   func(k int) bool
}

func (c *rowCutter) write(rec arrow.RecordBatch, sink *fileSink, frags map[int][]arrow.RecordBatch) error {
	defer rec.Release()
	for off := int64(0); off < rec.NumRows(); {
		k, ok := slices.BinarySearch(c.starts, c.pos)
		if !ok {
			k--
		}
		take := min(c.starts[k+1]-c.pos, rec.NumRows()-off)
		part := rec.NewSlice(off, off+take)
		if c.full(k) {
			if err := sink.Write(part); err != nil {
				return fmt.Errorf("write: %w", err)
			}
		} else {
			frags[k] = append(frags[k], part)
		}
		off += take
		c.pos += take
	}
	return nil
}

// WriteSpanning writes output file file of group group from the fragments
// the buckets it spans left (in bucket order), and returns it with the
// digest of its rows as read back.
func (j *Job) WriteSpanning(ctx context.Context, group, file int, frags []arrow.RecordBatch) ([]iceberg.DataFile, Digest, error) {
	out := NewDigest()
	o, _, err := j.group(group)
	if err != nil {
		return nil, out, err
	}
	g, _, err := j.ex.readGroup(ctx, o, nil)
	if err != nil {
		return nil, out, err
	}
	var rows int64
	for _, f := range frags {
		rows += f.NumRows()
	}
	sink := j.ex.newSink(ctx, g.sc, g.writeOpts, func(int) int64 { return max(rows, 1) }, sinkQueue)
	sink.writeID = j.writeID
	for _, f := range frags {
		f.Retain()
		if err = sink.Write(f); err != nil {
			break
		}
	}
	files, cerr := sink.Close()
	if err == nil {
		err = cerr
	}
	if err == nil {
		err = j.ex.readBack(ctx, files, g.scanOpts, g.geom, g.bbox, &out)
	}
	if err != nil {
		return files, out, fmt.Errorf("write file %d of group %d: %w", file+1, group+1, err)
	}
	return files, out, nil
}

// concatBatches joins recs (releasing them) into one batch.
func concatBatches(sc *arrow.Schema, recs []arrow.RecordBatch) (arrow.RecordBatch, error) {
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	if len(recs) == 1 {
		recs[0].Retain()
		return recs[0], nil
	}
	cols := make([]arrow.Array, sc.NumFields())
	var rows int64
	for _, r := range recs {
		rows += r.NumRows()
	}
	for c := range cols {
		parts := make([]arrow.Array, len(recs))
		for i, r := range recs {
			parts[i] = r.Column(c)
		}
		a, err := array.Concatenate(parts, memory.DefaultAllocator)
		if err != nil {
			return nil, fmt.Errorf("join fragments: %w", err)
		}
		defer a.Release()
		cols[c] = a
	}
	return array.NewRecordBatch(sc, cols, rows), nil
}
