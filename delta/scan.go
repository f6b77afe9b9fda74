package delta

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// defaultBatchSize is the number of rows per batch when ReadOptions leaves it 0.
const defaultBatchSize = 64 * 1024

// ReadOptions tunes Read and ReadFile.
type ReadOptions struct {
	// BatchSize is the rows per Parquet read batch (default defaultBatchSize);
	// batches after deletion vectors are applied may be smaller.
	BatchSize int64
	// Columns, when set, limits the data columns read to these top-level
	// logical names; the others come back as nulls of their type, so that
	// batches keep the schema ArrowSchema gives. Partition columns are
	// always filled in. Default: every column.
	Columns []string
}

// Read streams the live rows of every file of the snapshot, file by file and
// batch by batch, in the schema ArrowSchema gives: logical column names,
// partition columns filled in, deleted rows left out. The batch passed to fn
// is released when fn returns; fn must Retain it to keep it.
func (t *Table) Read(ctx context.Context, s *Snapshot, opts ReadOptions, fn func(*Add, arrow.RecordBatch) error) error {
	for _, f := range s.Files {
		err := t.ReadFile(ctx, s, f, opts, func(rec arrow.RecordBatch) error { return fn(f, rec) })
		if err != nil {
			return err
		}
	}
	return nil
}

// ReadFile streams the live rows of one logical file of the snapshot.
func (t *Table) ReadFile(ctx context.Context, s *Snapshot, add *Add, opts ReadOptions, fn func(arrow.RecordBatch) error) error {
	p, _, err := t.Store.TableRoot().Canonical(add.Path)
	if err != nil {
		return err
	}
	if err := t.readFile(ctx, s, add, p, opts, fn); err != nil {
		return fmt.Errorf("read %s: %w", p, err)
	}
	return nil
}

func (t *Table) readFile(ctx context.Context, s *Snapshot, add *Add, p string, opts ReadOptions, fn func(arrow.RecordBatch) error) error {
	schema, err := s.ArrowSchema()
	if err != nil {
		return err
	}
	var deleted *roaring64.Bitmap
	if add.DeletionVector != nil {
		if deleted, err = add.DeletionVector.Load(ctx, t.Store); err != nil {
			return err
		}
	}
	batch := opts.BatchSize
	if batch <= 0 {
		batch = defaultBatchSize
	}
	fr, closer, err := openParquet(ctx, t.Store, p, batch)
	if err != nil {
		return err
	}
	defer closer.Close()
	b, err := newBatcher(s, add, fr, opts.Columns)
	if err != nil {
		return err
	}
	rr, err := fr.GetRecordReader(ctx, b.leaves, nil)
	if err != nil {
		return err
	}
	defer rr.Release()
	var row uint64
	for rr.Next() {
		in := rr.RecordBatch()
		out, err := b.conform(ctx, schema, in)
		if err != nil {
			return err
		}
		out, err = applyDeletes(ctx, out, deleted, row)
		row += uint64(in.NumRows())
		if err != nil {
			return err
		}
		err = fn(out)
		out.Release()
		if err != nil {
			return err
		}
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// batcher turns a data file's batches into table batches.
type batcher struct {
	snap       *Snapshot
	mode       ColumnMapping
	partitions map[string]PartitionValue // by logical name
	leaves     []int
}

func newBatcher(s *Snapshot, add *Add, fr *pqarrow.FileReader, columns []string) (*batcher, error) {
	b := &batcher{snap: s, mode: s.ColumnMapping(), partitions: map[string]PartitionValue{}}
	for _, name := range s.Metadata.PartitionColumns {
		f := s.Schema.Field(name)
		if f == nil {
			return nil, fmt.Errorf("partition column %q is not in the schema", name)
		}
		v, err := ParsePartitionValue(add.PartitionValues[f.PhysicalName(b.mode)], f.Type)
		if err != nil {
			return nil, err
		}
		b.partitions[name] = v
	}
	fields := fr.Manifest.Fields
	arrowFields := make([]arrow.Field, len(fields))
	for i := range fields {
		arrowFields[i] = *fields[i].Field
	}
	for _, f := range s.Schema.Fields {
		if _, isPart := b.partitions[f.Name]; isPart || columns != nil && !slices.Contains(columns, f.Name) {
			continue
		}
		if i := matchField(f, b.mode, arrowFields); i >= 0 {
			b.leaves = appendLeaves(b.leaves, fields[i])
		}
	}
	if b.leaves == nil {
		b.leaves = []int{} // no data column needed: still read row counts
	}
	slices.Sort(b.leaves)
	return b, nil
}

func appendLeaves(dst []int, f pqarrow.SchemaField) []int {
	if f.IsLeaf() {
		return append(dst, f.ColIndex)
	}
	for _, c := range f.Children {
		dst = appendLeaves(dst, c)
	}
	return dst
}

func (b *batcher) conform(ctx context.Context, schema *arrow.Schema, in arrow.RecordBatch) (arrow.RecordBatch, error) {
	n := int(in.NumRows())
	inFields := in.Schema().Fields()
	cols := make([]arrow.Array, 0, len(b.snap.Schema.Fields))
	release := func() {
		for _, c := range cols {
			c.Release()
		}
	}
	for i, f := range b.snap.Schema.Fields {
		dt := schema.Field(i).Type
		var col arrow.Array
		var err error
		if v, isPart := b.partitions[f.Name]; isPart {
			col, err = constantArray(memory.DefaultAllocator, v, dt, n)
		} else if j := matchField(f, b.mode, inFields); j >= 0 {
			col, err = conformArray(ctx, in.Column(j), f.Type, dt, b.mode)
		} else {
			col = array.MakeArrayOfNull(memory.DefaultAllocator, dt, n)
		}
		if err != nil {
			release()
			return nil, fmt.Errorf("column %q: %w", f.Name, err)
		}
		cols = append(cols, col)
	}
	rec := array.NewRecordBatch(schema, cols, int64(n))
	release()
	return rec, nil
}

// conformArray gives a file column the table's type: nested fields are
// matched by physical name (or id) and renamed to logical names, missing ones
// become nulls, and primitive types are cast (INT96 timestamps, for one).
func conformArray(ctx context.Context, arr arrow.Array, t DataType, dt arrow.DataType, mode ColumnMapping) (arrow.Array, error) {
	switch t := t.(type) {
	case *StructType:
		return conformStruct(ctx, arr, t, dt.(*arrow.StructType), mode)
	case *ArrayType:
		l, ok := arr.(array.ListLike)
		if !ok || arr.DataType().ID() != arrow.LIST {
			break
		}
		lt := dt.(*arrow.ListType)
		vals, err := conformArray(ctx, l.ListValues(), t.ElementType, lt.Elem(), mode)
		if err != nil {
			return nil, err
		}
		defer vals.Release()
		d := arr.Data()
		nd := array.NewData(dt, d.Len(), d.Buffers(), []arrow.ArrayData{vals.Data()}, d.NullN(), d.Offset())
		defer nd.Release()
		return array.MakeFromData(nd), nil
	case *MapType:
		return conformMap(ctx, arr, t, dt.(*arrow.MapType), mode)
	}
	if arrow.TypeEqual(arr.DataType(), dt) {
		arr.Retain()
		return arr, nil
	}
	return compute.CastArray(ctx, arr, compute.UnsafeCastOptions(dt))
}

func conformStruct(ctx context.Context, arr arrow.Array, t *StructType, dt *arrow.StructType, mode ColumnMapping) (arrow.Array, error) {
	sa, ok := arr.(*array.Struct)
	if !ok {
		return nil, fmt.Errorf("file column is %s, table wants a struct", arr.DataType())
	}
	inFields := sa.DataType().(*arrow.StructType).Fields()
	children := make([]arrow.Array, len(t.Fields))
	defer func() {
		for _, c := range children {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i, f := range t.Fields {
		ft := dt.Field(i).Type
		if j := matchField(f, mode, inFields); j >= 0 {
			c, err := conformArray(ctx, sa.Field(j), f.Type, ft, mode)
			if err != nil {
				return nil, fmt.Errorf("field %q: %w", f.Name, err)
			}
			children[i] = c
		} else {
			children[i] = array.MakeArrayOfNull(memory.DefaultAllocator, ft, sa.Len())
		}
	}
	d := sa.Data()
	return array.NewStructArrayWithFieldsAndNulls(children, dt.Fields(), d.Buffers()[0], d.NullN(), d.Offset())
}

func conformMap(ctx context.Context, arr arrow.Array, t *MapType, dt *arrow.MapType, mode ColumnMapping) (arrow.Array, error) {
	ma, ok := arr.(*array.Map)
	if !ok {
		return nil, fmt.Errorf("file column is %s, table wants a map", arr.DataType())
	}
	keys, err := conformArray(ctx, ma.Keys(), t.KeyType, dt.KeyType(), mode)
	if err != nil {
		return nil, err
	}
	defer keys.Release()
	items, err := conformArray(ctx, ma.Items(), t.ValueType, dt.ItemType(), mode)
	if err != nil {
		return nil, err
	}
	defer items.Release()
	entries := array.NewData(dt.Elem(), keys.Len(), []*memory.Buffer{nil}, []arrow.ArrayData{keys.Data(), items.Data()}, 0, 0)
	defer entries.Release()
	d := ma.Data()
	nd := array.NewData(dt, d.Len(), d.Buffers(), []arrow.ArrayData{entries}, d.NullN(), d.Offset())
	defer nd.Release()
	return array.MakeFromData(nd), nil
}

// applyDeletes drops the rows of rec whose file row index (first + i) is in
// deleted. It takes ownership of rec.
func applyDeletes(ctx context.Context, rec arrow.RecordBatch, deleted *roaring64.Bitmap, first uint64) (arrow.RecordBatch, error) {
	if deleted == nil || deleted.IsEmpty() {
		return rec, nil
	}
	n := int(rec.NumRows())
	// Rank counts members <= x: equal ranks mean none in [first, first+n).
	if first > 0 && deleted.Rank(first+uint64(n)-1) == deleted.Rank(first-1) ||
		first == 0 && n > 0 && deleted.Rank(uint64(n)-1) == 0 {
		return rec, nil
	}
	mb := array.NewBooleanBuilder(memory.DefaultAllocator)
	defer mb.Release()
	mb.Reserve(n)
	for i := 0; i < n; i++ {
		mb.UnsafeAppend(!deleted.Contains(first + uint64(i)))
	}
	mask := mb.NewArray()
	defer mask.Release()
	defer rec.Release()
	out, err := compute.FilterRecordBatch(ctx, rec, mask, compute.DefaultFilterOptions())
	if err != nil {
		return nil, fmt.Errorf("apply deletion vector: %w", err)
	}
	return out, nil
}
