package cluster

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Gather returns the rows of recs numbered rows (counted across the
// batches in order) as one record batch with schema, in the order given.
// Unlike a take over concatenated columns it copies only the rows it
// returns: fixed-width, boolean and binary columns are copied value by
// value, other types (structs, lists) through per-batch takes.
func Gather(schema *arrow.Schema, recs []arrow.RecordBatch, rows []int32, mem memory.Allocator) (arrow.RecordBatch, error) {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	loc := locate(recs, rows)
	cols := make([]arrow.Array, schema.NumFields())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	srcs := make([]arrow.Array, len(recs))
	for c := range cols {
		for b, r := range recs {
			srcs[b] = r.Column(c)
		}
		col, err := gatherColumn(schema.Field(c).Type, srcs, loc, mem)
		if err != nil {
			return nil, fmt.Errorf("cluster: gather column %q: %w", schema.Field(c).Name, err)
		}
		cols[c] = col
	}
	return array.NewRecordBatch(schema, cols, int64(len(rows))), nil
}

// rowLoc is where a gathered row comes from: batch b, row i of it.
type rowLoc struct{ b, i int32 }

func locate(recs []arrow.RecordBatch, rows []int32) []rowLoc {
	starts := make([]int64, len(recs)+1)
	least := int64(math.MaxInt64)
	for b, r := range recs {
		starts[b+1] = starts[b] + r.NumRows()
		if n := r.NumRows(); n > 0 {
			least = min(least, n)
		}
	}
	loc := make([]rowLoc, len(rows))
	total := starts[len(recs)]
	if total == 0 || len(rows) == 0 {
		return loc
	}
	// first[row>>shift] is the batch of the first row of a stretch of
	// 1<<shift rows, no longer than the shortest batch: a row is in that
	// batch or in one of the next few that start within its stretch.
	shift := bits.Len64(uint64(least)) - 1
	first := make([]int32, total>>shift+1)
	b := 0
	for i := range first {
		for b < len(recs)-1 && starts[b+1] <= int64(i)<<shift {
			b++
		}
		first[i] = int32(b)
	}
	for k, r := range rows {
		row := int64(r)
		b := first[row>>shift]
		for row >= starts[b+1] {
			b++
		}
		loc[k] = rowLoc{b, int32(row - starts[b])}
	}
	return loc
}

func gatherColumn(t arrow.DataType, srcs []arrow.Array, loc []rowLoc, mem memory.Allocator) (arrow.Array, error) {
	if ext, ok := t.(arrow.ExtensionType); ok {
		storage := make([]arrow.Array, len(srcs))
		for b, s := range srcs {
			storage[b] = s.(array.ExtensionArray).Storage()
		}
		st, err := gatherColumn(ext.StorageType(), storage, loc, mem)
		if err != nil {
			return nil, err
		}
		defer st.Release()
		return array.NewExtensionArrayWithStorage(ext, st), nil
	}
	switch t.ID() {
	case arrow.BOOL:
		return gatherBools(t, srcs, loc, mem), nil
	case arrow.BINARY, arrow.STRING:
		return gatherBinary[int32](t, srcs, loc, mem), nil
	case arrow.LARGE_BINARY, arrow.LARGE_STRING:
		return gatherBinary[int64](t, srcs, loc, mem), nil
	}
	if fw, ok := t.(arrow.FixedWidthDataType); ok && fw.BitWidth()%8 == 0 && len(t.Layout().Buffers) == 2 {
		return gatherFixed(t, fw.BitWidth()/8, srcs, loc, mem), nil
	}
	return gatherByTake(srcs, loc, mem)
}

// validity copies the validity of the gathered rows, or returns nil when
// none is null.
func validity(srcs []arrow.Array, loc []rowLoc, mem memory.Allocator) (*memory.Buffer, int) {
	anyNull := false
	for _, s := range srcs {
		anyNull = anyNull || s.NullN() > 0
	}
	if !anyNull {
		return nil, 0
	}
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(int(bitutil.BytesForBits(int64(len(loc)))))
	bits := buf.Bytes()
	clear(bits)
	nulls := 0
	for k, l := range loc {
		if srcs[l.b].IsValid(int(l.i)) {
			bitutil.SetBit(bits, k)
		} else {
			nulls++
		}
	}
	return buf, nulls
}

func gatherFixed(t arrow.DataType, width int, srcs []arrow.Array, loc []rowLoc, mem memory.Allocator) arrow.Array {
	vals := make([][]byte, len(srcs))
	for b, s := range srcs {
		if d := s.Data(); d.Len() > 0 {
			vals[b] = d.Buffers()[1].Bytes()[d.Offset()*width:]
		}
	}
	out := memory.NewResizableBuffer(mem)
	out.Resize(len(loc) * width)
	dst := out.Bytes()
	switch width {
	case 8:
		gatherWords[uint64](dst, vals, loc)
	case 4:
		gatherWords[uint32](dst, vals, loc)
	case 2:
		gatherWords[uint16](dst, vals, loc)
	case 1:
		gatherWords[uint8](dst, vals, loc)
	default:
		for k, l := range loc {
			i := int(l.i) * width
			copy(dst[k*width:(k+1)*width], vals[l.b][i:i+width])
		}
	}
	valid, nulls := validity(srcs, loc, mem)
	data := array.NewData(t, len(loc), []*memory.Buffer{valid, out}, nil, nulls, 0)
	defer data.Release()
	releaseBuffers(valid, out)
	return array.MakeFromData(data)
}

// gatherWords copies the values of W at loc from vals (each batch's value
// bytes) into dst, a value at a time rather than a byte copy per value.
func gatherWords[W uint8 | uint16 | uint32 | uint64](dst []byte, vals [][]byte, loc []rowLoc) {
	out := arrow.GetData[W](dst)[:len(loc)]
	src := make([][]W, len(vals))
	for b, v := range vals {
		src[b] = arrow.GetData[W](v)
	}
	for k, l := range loc {
		out[k] = src[l.b][l.i]
	}
}

func gatherBools(t arrow.DataType, srcs []arrow.Array, loc []rowLoc, mem memory.Allocator) arrow.Array {
	out := memory.NewResizableBuffer(mem)
	out.Resize(int(bitutil.BytesForBits(int64(len(loc)))))
	dst := out.Bytes()
	clear(dst)
	for k, l := range loc {
		if srcs[l.b].(*array.Boolean).Value(int(l.i)) {
			bitutil.SetBit(dst, k)
		}
	}
	valid, nulls := validity(srcs, loc, mem)
	data := array.NewData(t, len(loc), []*memory.Buffer{valid, out}, nil, nulls, 0)
	defer data.Release()
	releaseBuffers(valid, out)
	return array.MakeFromData(data)
}

type offset interface{ int32 | int64 }

func gatherBinary[O offset](t arrow.DataType, srcs []arrow.Array, loc []rowLoc, mem memory.Allocator) arrow.Array {
	offs := make([][]O, len(srcs))
	datas := make([][]byte, len(srcs))
	for b, s := range srcs {
		d := s.Data()
		if d.Len() == 0 {
			continue
		}
		all := arrow.GetData[O](d.Buffers()[1].Bytes())
		offs[b] = all[d.Offset() : d.Offset()+d.Len()+1]
		if buf := d.Buffers()[2]; buf != nil {
			datas[b] = buf.Bytes()
		}
	}
	var size O
	for _, l := range loc {
		o := offs[l.b]
		size += o[l.i+1] - o[l.i]
	}
	var zero O
	offBuf := memory.NewResizableBuffer(mem)
	offBuf.Resize((len(loc) + 1) * int(unsafe.Sizeof(zero)))
	outOffs := arrow.GetData[O](offBuf.Bytes())
	dataBuf := memory.NewResizableBuffer(mem)
	dataBuf.Resize(int(size))
	dst := dataBuf.Bytes()
	var pos O
	for k, l := range loc {
		o := offs[l.b]
		lo, hi := o[l.i], o[l.i+1]
		outOffs[k] = pos
		copy(dst[pos:], datas[l.b][lo:hi])
		pos += hi - lo
	}
	outOffs[len(loc)] = pos
	valid, nulls := validity(srcs, loc, mem)
	data := array.NewData(t, len(loc), []*memory.Buffer{valid, offBuf, dataBuf}, nil, nulls, 0)
	defer data.Release()
	releaseBuffers(valid, offBuf, dataBuf)
	return array.MakeFromData(data)
}

func releaseBuffers(bufs ...*memory.Buffer) {
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
}

// gatherByTake gathers a column of any type: one take per source batch,
// then one take that puts the pieces in the order asked for.
func gatherByTake(srcs []arrow.Array, loc []rowLoc, mem memory.Allocator) (arrow.Array, error) {
	ctx := compute.WithAllocator(context.Background(), mem)
	per := make([][]int32, len(srcs))
	for _, l := range loc {
		per[l.b] = append(per[l.b], l.i)
	}
	var pieces []arrow.Array
	defer func() {
		for _, p := range pieces {
			p.Release()
		}
	}()
	first := make([]int32, len(srcs)) // position of each batch's first row in the concatenation
	var n int32
	for b, idx := range per {
		first[b] = n
		if len(idx) == 0 {
			continue
		}
		p, err := takeInt32(ctx, srcs[b], idx)
		if err != nil {
			return nil, err
		}
		pieces = append(pieces, p)
		n += int32(len(idx))
	}
	if len(pieces) == 0 {
		return array.MakeArrayOfNull(mem, srcs[0].DataType(), 0), nil
	}
	all, err := array.Concatenate(pieces, mem)
	if err != nil {
		return nil, err
	}
	defer all.Release()
	next := make([]int32, len(srcs))
	order := make([]int32, len(loc))
	for k, l := range loc {
		order[k] = first[l.b] + next[l.b]
		next[l.b]++
	}
	return takeInt32(ctx, all, order)
}

func takeInt32(ctx context.Context, values arrow.Array, idx []int32) (arrow.Array, error) {
	buf := memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(idx))
	ia := array.NewInt32Data(array.NewData(arrow.PrimitiveTypes.Int32, len(idx), []*memory.Buffer{nil, buf}, nil, 0, 0))
	defer ia.Release()
	return compute.TakeArray(ctx, values, ia)
}
