package spill

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Buckets writes and reads the spill files of one group's buckets: each
// flush of a bucket is one Arrow IPC stream, LZ4-compressed, in a segment
// file of its own; a bucket is read back segment by segment in the order
// written.
type Buckets struct {
	dir      string
	schema   *arrow.Schema
	segments [][]string // per bucket
	bytes    []int64    // per bucket: Arrow bytes written (what loading costs)
	disk     int64      // bytes on disk

	// BeforeWrite, when set, runs before every segment is written; an
	// error fails the write as a full disk would (tests set it).
	BeforeWrite func() error
}

// NewBuckets returns n empty buckets of rows of schema, spilled into dir.
func NewBuckets(dir *Dir, schema *arrow.Schema, n int) *Buckets {
	return &Buckets{dir: dir.Path(), schema: schema, segments: make([][]string, n), bytes: make([]int64, n)}
}

// Bytes returns the Arrow bytes written to each bucket: what loading it
// costs in memory.
func (bf *Buckets) Bytes() []int64 { return bf.bytes }

// DiskBytes is what the segments written so far take on disk.
func (bf *Buckets) DiskBytes() int64 { return bf.disk }

// Write appends recs to bucket b as one new segment.
func (bf *Buckets) Write(b int, recs []arrow.RecordBatch) error {
	path := filepath.Join(bf.dir, fmt.Sprintf("b%05d-%06d.arrows", b, len(bf.segments[b])))
	full := func(err error) error {
		return fmt.Errorf("%w: write %s: %w (is the spill directory full? set the spill-dir option or %s)", ErrDir, path, err, EnvDir)
	}
	if bf.BeforeWrite != nil {
		if err := bf.BeforeWrite(); err != nil {
			return full(err)
		}
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return full(err)
	}
	w := ipc.NewWriter(f, ipc.WithSchema(bf.schema), ipc.WithLZ4())
	for _, r := range recs {
		if err = w.Write(r); err != nil {
			break
		}
		bf.bytes[b] += RecordBytes(r)
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if st, serr := f.Stat(); serr == nil {
		bf.disk += st.Size()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	bf.segments[b] = append(bf.segments[b], path)
	if err != nil {
		return full(err)
	}
	return nil
}

// Read loads every row of bucket b, in the order written.
func (bf *Buckets) Read(b int) ([]arrow.RecordBatch, error) {
	var out []arrow.RecordBatch
	fail := func(err error) ([]arrow.RecordBatch, error) {
		for _, r := range out {
			r.Release()
		}
		return nil, fmt.Errorf("%w: read bucket %d: %w", ErrDir, b, err)
	}
	for _, path := range bf.segments[b] {
		f, err := os.Open(path)
		if err != nil {
			return fail(err)
		}
		rd, err := ipc.NewReader(f)
		if err != nil {
			f.Close()
			return fail(err)
		}
		for rd.Next() {
			rec := rd.RecordBatch()
			rec.Retain()
			out = append(out, conformTo(bf.schema, rec))
		}
		err = rd.Err()
		rd.Release()
		f.Close()
		if err != nil && !errors.Is(err, io.EOF) {
			return fail(err)
		}
	}
	return out, nil
}

// Remove deletes bucket b's segments once they are loaded.
func (bf *Buckets) Remove(b int) {
	for _, p := range bf.segments[b] {
		os.Remove(p)
	}
	bf.segments[b] = nil
}

// conformTo returns rec with schema sc: IPC may hand back an extension
// column as its storage type, which is wrapped again. It takes ownership
// of rec.
func conformTo(sc *arrow.Schema, rec arrow.RecordBatch) arrow.RecordBatch {
	if rec.Schema().Equal(sc) {
		return rec
	}
	defer rec.Release()
	cols := make([]arrow.Array, sc.NumFields())
	for i := range cols {
		col := rec.Column(i)
		if ext, ok := sc.Field(i).Type.(arrow.ExtensionType); ok {
			if _, isExt := col.(array.ExtensionArray); !isExt {
				cols[i] = array.NewExtensionArrayWithStorage(ext, col)
				defer cols[i].Release()
				continue
			}
		}
		cols[i] = col
	}
	return array.NewRecordBatch(sc, cols, rec.NumRows())
}

// RecordBytes is the size of the buffers rec's columns hold (slices count
// whole buffers).
func RecordBytes(rec arrow.RecordBatch) int64 { return recordBytes(rec, (*memory.Buffer).Len) }

// HeldBytes is the memory rec's buffers take: their capacity, which in
// batches from the Parquet reader can be several times their length.
func HeldBytes(rec arrow.RecordBatch) int64 { return recordBytes(rec, (*memory.Buffer).Cap) }

func recordBytes(rec arrow.RecordBatch, size func(*memory.Buffer) int) int64 {
	var n int64
	var walk func(d arrow.ArrayData)
	walk = func(d arrow.ArrayData) {
		for _, b := range d.Buffers() {
			if b != nil {
				n += int64(size(b))
			}
		}
		for _, c := range d.Children() {
			walk(c)
		}
	}
	for _, c := range rec.Columns() {
		walk(c.Data())
	}
	return n
}
