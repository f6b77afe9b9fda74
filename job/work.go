package job

import (
	"context"
	"fmt"
	"iter"
	"maps"
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"

	"github.com/geocompact/geocompact/cluster"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/engine/verify"
	"github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/geowrite"
	"github.com/geocompact/geocompact/table/icebergtable"
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
	Out verify.Digest
	// Fragments are the bucket's rows of files that span its boundaries
	// (at most two: the head and the tail), in file order.
	Fragments []Fragment
}

// ScatterFile reads the data file at path of group group (its deletes
// applied), validates and digests its rows, and hands them to emit cut
// by bucket (emit owns each batch). It returns the digest of the rows
// read and, for a group whose layout cuts files at cells (kd; see
// engine.GroupSpec.CutShift), the rows of each cell the file sent each
// bucket (cells[b] for bucket b), else nil. The cells of all the group's
// files, added up, go to WriteBucket.
func (j *Rewrite) ScatterFile(ctx context.Context, group int, path string, emit func(bucket int, rec arrow.RecordBatch) error) (verify.Digest, []cluster.Cells, error) {
	p, err := j.open()
	if err != nil {
		return verify.Digest{}, nil, err
	}
	return p.Scatter(ctx, group, path, emit)
}

// fileStarts returns the first row of every output file of group g
// holding rows rows in all, of cells cells (see WriteBucket), and a last
// entry equal to rows.
func fileStarts(g *engine.GroupSpec, rows int64, cells cluster.Cells) ([]int64, error) {
	fileRows, err := g.FileRows(rows, cells)
	if err != nil {
		return nil, err
	}
	starts := []int64{0}
	for i := 0; starts[i] < rows; i++ {
		starts = append(starts, min(rows, starts[i]+fileRows(i)))
	}
	return starts, nil
}

// WriteBucket orders bucket bucket of group group (recs, in input order:
// by file, then as read), and writes the files that lie wholly inside its
// rows, which are rows [firstRow, firstRow+rows of recs) of the group's
// groupRows. Rows of files that cross the bucket's edges come back as
// fragments for WriteSpanning. cells are the cell counts of all the
// group's rows (what ScatterFile returned for every file and bucket,
// added up) when the group cuts its files at cells, else nil: the files
// are cut where the local engine cuts them, which for kd depends on the
// counts of every leaf.
func (j *Rewrite) WriteBucket(ctx context.Context, group, bucket int, firstRow, groupRows int64, cells cluster.Cells, recs []arrow.RecordBatch) (*BucketOutput, error) {
	p, err := j.open()
	if err != nil {
		return nil, err
	}
	if group < 0 || group >= len(j.Groups) {
		return nil, fmt.Errorf("job %s has no group %d", j.ID, group)
	}
	starts, err := fileStarts(&j.Groups[group], groupRows, cells)
	if err != nil {
		return nil, fmt.Errorf("write bucket %d of group %d: %w", bucket, group+1, err)
	}
	var rows int64
	for _, r := range recs {
		rows += r.NumRows()
	}
	// Files k0..k1-1 lie wholly inside [firstRow, firstRow+rows).
	k0, _ := slices.BinarySearch(starts, firstRow)
	k1 := k0
	for k1+1 < len(starts) && starts[k1+1] <= firstRow+rows {
		k1++
	}
	w, err := p.NewWriter(ctx, group, func(i int) int64 { return starts[k0+i+1] - starts[k0+i] })
	if err != nil {
		return nil, err
	}
	frags := map[int][]arrow.RecordBatch{}
	cut := &rowCutter{starts: starts, pos: firstRow, full: func(k int) bool { return k >= k0 && k < k1 }}
	perm, err := w.Order(recs)
	if err == nil {
		err = w.Gather(recs, perm, func(rec arrow.RecordBatch) error { return cut.write(rec, w, frags) })
	}
	out := &BucketOutput{}
	var cerr error
	var files []table.OutFile
	files, out.Out, cerr = w.Close(ctx)
	out.Files = icebergtable.DataFiles(files)
	if err == nil {
		err = cerr
	}
	for _, k := range slices.Sorted(maps.Keys(frags)) {
		rec, cerr := geowrite.ConcatBatches(frags[k])
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

// rowCutter sends a stream of rows, starting at global row pos, either to
// a writer (rows of files full reports true for) or to fragments by file.
type rowCutter struct {
	starts []int64
	pos    int64
	full   func(k int) bool
}

func (c *rowCutter) write(rec arrow.RecordBatch, w *engine.PieceWriter, frags map[int][]arrow.RecordBatch) error {
	defer rec.Release()
	for off := int64(0); off < rec.NumRows(); {
		k, ok := slices.BinarySearch(c.starts, c.pos)
		if !ok {
			k--
		}
		take := min(c.starts[k+1]-c.pos, rec.NumRows()-off)
		part := rec.NewSlice(off, off+take)
		if c.full(k) {
			if err := w.Write(part); err != nil {
				return err
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
func (j *Rewrite) WriteSpanning(ctx context.Context, group, file int, frags []arrow.RecordBatch) ([]iceberg.DataFile, verify.Digest, error) {
	return j.WriteSpanningSeq(ctx, group, file, func(yield func(arrow.RecordBatch, error) bool) {
		for _, f := range frags {
			f.Retain()
			if !yield(f, nil) {
				return
			}
		}
	})
}

// WriteSpanningSeq is WriteSpanning with the fragments' rows streamed:
// frags yields batches (each the receiver's to release) in order, so
// that a file larger than memory is written from fragments read one at a
// time.
func (j *Rewrite) WriteSpanningSeq(ctx context.Context, group, file int, frags iter.Seq2[arrow.RecordBatch, error]) ([]iceberg.DataFile, verify.Digest, error) {
	p, err := j.open()
	if err != nil {
		return nil, verify.NewDigest(), err
	}
	// One file, however many rows come.
	w, err := p.NewWriter(ctx, group, func(int) int64 { return math.MaxInt64 })
	if err != nil {
		return nil, verify.NewDigest(), err
	}
	for rec, ferr := range frags {
		if err = ferr; err != nil {
			break
		}
		if err = w.Write(rec); err != nil {
			break
		}
	}
	files, out, cerr := w.Close(ctx)
	if err == nil {
		err = cerr
	}
	if err != nil {
		return icebergtable.DataFiles(files), out, fmt.Errorf("write file %d of group %d: %w", file+1, group+1, err)
	}
	return icebergtable.DataFiles(files), out, nil
}

// RewriteGroup rewrites a group whose spec is Whole in one piece, as the
// local engine does (see engine.Pieces.RewriteGroup): it returns the
// files written and the digests of the rows read and written.
func (j *Rewrite) RewriteGroup(ctx context.Context, group int) ([]iceberg.DataFile, verify.Digest, verify.Digest, error) {
	p, err := j.open()
	if err != nil {
		return nil, verify.Digest{}, verify.Digest{}, err
	}
	files, in, out, err := p.RewriteGroup(ctx, group)
	return icebergtable.DataFiles(files), in, out, err
}
