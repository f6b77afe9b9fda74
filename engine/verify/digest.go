// Package verify digests rows independently of their order (row count,
// bbox extent, an order-independent checksum of every value), so that a
// rewrite can prove the rows it wrote are the rows it read: the engine
// digests a group as it reads it and again as it reads the written files
// back, and digests computed in different processes combine with Merge.
package verify

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/zeebo/xxh3"

	"github.com/geocompact/geocompact/spatial"
)

// Digest summarises a set of rows independently of their order: the row
// count, the union of their bounding boxes and two order-independent
// combinations (sum and xor) of a 64-bit hash of every row's values.
// Equal digests before and after a rewrite mean the rows are the same
// multiset, up to a 2^-64-scale chance of collision.
type Digest struct {
	Rows   int64         `json:"rows"`
	Extent spatial.Bound `json:"extent"`
	Sum    uint64        `json:"sum"`
	Xor    uint64        `json:"xor"`
}

// digestSeed is fixed for good: digests computed in different processes
// (the workers of a distributed rewrite) are combined and compared.
const digestSeed = 0x67656f636f6d7061

// NewDigest returns the digest of no rows.
func NewDigest() Digest { return Digest{Extent: spatial.EmptyBound()} }

// digestBytes is the size of an encoded digest: seven 8-byte words.
const digestBytes = 56

// Encode returns d as 56 bytes, seven little-endian words (the extent's
// floats as their bits), for the processes of a distributed rewrite to
// exchange: JSON cannot carry the infinite extent of no rows.
func (d Digest) Encode() []byte {
	ws := []uint64{uint64(d.Rows), d.Sum, d.Xor, math.Float64bits(d.Extent.MinX), math.Float64bits(d.Extent.MinY),
		math.Float64bits(d.Extent.MaxX), math.Float64bits(d.Extent.MaxY)}
	out := make([]byte, 0, digestBytes)
	for _, w := range ws {
		out = binary.LittleEndian.AppendUint64(out, w)
	}
	return out
}

// DecodeDigest reads what Encode wrote.
func DecodeDigest(b []byte) (Digest, error) {
	if len(b) != digestBytes {
		return Digest{}, fmt.Errorf("decode digest: %d bytes, want %d", len(b), digestBytes)
	}
	w := func(i int) uint64 { return binary.LittleEndian.Uint64(b[8*i:]) }
	f := func(i int) float64 { return math.Float64frombits(w(i)) }
	return Digest{Rows: int64(w(0)), Sum: w(1), Xor: w(2), Extent: spatial.Bound{MinX: f(3), MinY: f(4), MaxX: f(5), MaxY: f(6)}}, nil
}

// Add folds the rows of rec into d. geomCol and bboxCols give the spatial
// columns (-1 when absent) used for the extent: the bbox columns when the
// table has them, else the geometry's WKB envelope.
func (d *Digest) Add(rec arrow.RecordBatch, geomCol int, bboxCols [4]int) error {
	n := int(rec.NumRows())
	if n == 0 {
		return nil
	}
	h := make([]uint64, n)
	for c := range int(rec.NumCols()) {
		if err := hashColumn(h, rec.Column(c), uint64(c+1)); err != nil {
			return fmt.Errorf("column %s: %w", rec.Schema().Field(c).Name, err)
		}
	}
	for _, v := range h {
		v = mix(v)
		d.Sum += v
		d.Xor ^= v
	}
	d.Rows += int64(n)
	d.Extent = d.Extent.Extend(Extent(rec, geomCol, bboxCols))
	return nil
}

// Diff describes how d and o differ, or returns "" when they are equal.
func (d Digest) Diff(o Digest) string {
	switch {
	case d.Rows != o.Rows:
		return fmt.Sprintf("row count %d before, %d after", d.Rows, o.Rows)
	case d.Extent != o.Extent:
		return fmt.Sprintf("bbox extent %v before, %v after", d.Extent, o.Extent)
	case d.Sum != o.Sum || d.Xor != o.Xor:
		return "content checksum differs (same row count and extent)"
	}
	return ""
}

// Merge adds the rows summarised by o to d.
func (d *Digest) Merge(o Digest) {
	d.Rows += o.Rows
	d.Sum += o.Sum
	d.Xor ^= o.Xor
	d.Extent = d.Extent.Extend(o.Extent)
}

// mix is splitmix64's finaliser.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// hashColumn folds column arr (salted by its position) into the row hashes.
func hashColumn(h []uint64, arr arrow.Array, salt uint64) error {
	if ext, ok := arr.(array.ExtensionArray); ok {
		arr = ext.Storage()
	}
	const nullHash = 0x6a09e667f3bcc909
	fold := func(i int, v uint64) { h[i] = (h[i]+salt)*0x9e3779b97f4a7c15 ^ v }
	// Most columns hold no null, even those that may: they skip every
	// row's validity bit.
	nullable := arr.NullN() > 0
	switch a := arr.(type) {
	case interface{ Value(int) []byte }: // binary and large binary
		for i := range h {
			if nullable && arr.IsNull(i) {
				fold(i, nullHash)
				continue
			}
			fold(i, xxh3.HashSeed(a.Value(i), digestSeed))
		}
	case *array.String:
		for i := range h {
			if nullable && a.IsNull(i) {
				fold(i, nullHash)
				continue
			}
			fold(i, xxh3.HashStringSeed(a.Value(i), digestSeed))
		}
	case *array.Boolean:
		for i := range h {
			switch {
			case nullable && a.IsNull(i):
				fold(i, nullHash)
			case a.Value(i):
				fold(i, 1)
			default:
				fold(i, 2)
			}
		}
	default:
		fw, ok := arr.DataType().(arrow.FixedWidthDataType)
		if !ok || fw.BitWidth()%8 != 0 || len(arr.Data().Buffers()) < 2 {
			for i := range h { // nested and rare types: their string form
				if nullable && arr.IsNull(i) {
					fold(i, nullHash)
					continue
				}
				fold(i, xxh3.HashStringSeed(arr.ValueStr(i), digestSeed))
			}
			return nil
		}
		w := fw.BitWidth() / 8
		buf := arr.Data().Buffers()[1].Bytes()[arr.Data().Offset()*w:]
		for i := range h {
			if nullable && arr.IsNull(i) {
				fold(i, nullHash)
				continue
			}
			b := buf[i*w : (i+1)*w]
			if w == 8 {
				fold(i, binary.LittleEndian.Uint64(b))
			} else {
				fold(i, xxh3.HashSeed(b, digestSeed))
			}
		}
	}
	return nil
}

// Extent is the union of the rows' bounding boxes.
func Extent(rec arrow.RecordBatch, geomCol int, bboxCols [4]int) spatial.Bound {
	ext := spatial.EmptyBound()
	EachRowBound(rec, geomCol, bboxCols, func(_ int, b spatial.Bound) { ext = ext.Extend(b) })
	return ext
}

// EachRowBound calls f with the index and bounding box of every row of
// rec that has one, read from the four bbox columns when bboxCols holds
// them, else from the WKB geometry column (-1 for none). Rows without a
// box (nulls, undecodable WKB) are skipped.
func EachRowBound(rec arrow.RecordBatch, geomCol int, bboxCols [4]int, f func(row int, b spatial.Bound)) {
	if bboxCols[0] >= 0 {
		var cols [4]*array.Float64
		for i, c := range bboxCols {
			col, ok := rec.Column(c).(*array.Float64)
			if !ok {
				return
			}
			cols[i] = col
		}
		for r := range int(rec.NumRows()) {
			if cols[0].IsNull(r) {
				continue
			}
			f(r, spatial.Bound{MinX: cols[0].Value(r), MinY: cols[1].Value(r), MaxX: cols[2].Value(r), MaxY: cols[3].Value(r)})
		}
		return
	}
	if geomCol < 0 {
		return
	}
	arr := rec.Column(geomCol)
	if e, ok := arr.(array.ExtensionArray); ok {
		arr = e.Storage()
	}
	bin, ok := arr.(*array.Binary)
	if !ok {
		return
	}
	for r := range bin.Len() {
		if bin.IsNull(r) {
			continue
		}
		if b, err := spatial.Envelope(bin.Value(r)); err == nil {
			f(r, b)
		}
	}
}

// Columns finds the geometry column geomName ("" for none) and the four
// bbox columns in sc (-1 for each that is absent, and for all four when
// one is): the spatial columns Add takes.
func Columns(sc *arrow.Schema, geomName string) (geom int, bbox [4]int) {
	geom = -1
	if idx := sc.FieldIndices(geomName); geomName != "" && len(idx) > 0 {
		geom = idx[0]
	}
	for i, n := range spatial.BBoxColumns {
		bbox[i] = -1
		if idx := sc.FieldIndices(n); len(idx) > 0 {
			bbox[i] = idx[0]
		}
	}
	for _, c := range bbox {
		if c < 0 {
			return geom, [4]int{-1, -1, -1, -1}
		}
	}
	return geom, bbox
}
