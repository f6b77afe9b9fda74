package cluster

import (
	"errors"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/geocompact/geocompact/spatial"
)

// SortOptions tune how a Sorter normalises coordinates.
type SortOptions struct {
	// Extent is the table's or group's extent, from file statistics. Curve
	// positions are normalised over it and clamp to its edge. Empty
	// (spatial.EmptyBound(), or the zero value) means the extent of the
	// data's box centres.
	Extent spatial.Bound
	// Normalize selects extent (default) or quantile normalisation.
	Normalize Normalization
	// Bits is the number of bits per curve dimension. 0 means 32 for two
	// dimensions and 64/n for n; Bits*dimensions must be at most 64.
	Bits int
	// Mem allocates the output batches; nil means memory.DefaultAllocator.
	Mem memory.Allocator
	// Files is the number of files the sorted rows will be cut into. Only
	// str and kd use it, to size their slabs (about sqrt(Files) of them)
	// and leaves; 0 means DefaultSTRFiles.
	Files int
	// Windows are the query windows kd costs its splits for, each set
	// weighing the same; nil means data-placed windows of KDAreas of the
	// extent.
	Windows []WindowSet
}

// Sorter orders the rows of a file group by a sort order, across all
// batches (not per batch). It holds no state between calls and is safe for
// concurrent use.
type Sorter struct {
	order  Order
	schema *arrow.Schema
	opts   SortOptions

	// Linear orders.
	fields []linearField
	// Curves: spatial sources give two dimensions each, numeric columns one.
	dims    []dimension
	spatial []spatialSource
	numeric []int // column indexes
	bits    int
	// scale, when not nil, is the frozen normalisation (WithScale).
	scale []dimNorm
}

type linearField struct {
	Field
	col    int
	str    bool
	corner bool // the linear shorthand's bbox_minx/bbox_miny from a spatial column
	axis   int  // 0 for x, 1 for y, when corner
}

// dimension is one axis of a curve: axis 0 or 1 of spatial source src, or
// numeric column num (an index into Sorter.numeric) when src < 0.
type dimension struct {
	src, axis, num int
}

// NewSorter validates o against schema and returns a Sorter for it. Errors
// wrap ErrSortOrder and name the column: missing, of a type that does not
// sort, or non-numeric in a curve.
func NewSorter(o Order, schema *arrow.Schema, opts SortOptions) (*Sorter, error) {
	s := &Sorter{order: o, schema: schema, opts: opts}
	if opts.Extent == (spatial.Bound{}) {
		s.opts.Extent = spatial.EmptyBound()
	}
	if opts.Normalize != NormalizeExtent && opts.Normalize != NormalizeQuantile {
		return nil, fmt.Errorf("cluster: unknown normalization %d", int(opts.Normalize))
	}
	if opts.Mem == nil {
		s.opts.Mem = memory.DefaultAllocator
	}
	if opts.Files < 0 {
		return nil, fmt.Errorf("cluster: %d files, want 0 (the default) or more", opts.Files)
	}
	if opts.Files == 0 {
		s.opts.Files = DefaultSTRFiles
	}
	if o.Curve == CurveLinear {
		return s, s.resolveLinear()
	}
	if o.Curve != CurveZOrder && o.Curve != CurveHilbert && o.Curve != CurveSTR && o.Curve != CurveKD {
		return nil, fmt.Errorf("%w: unknown curve %d", ErrSortOrder, int(o.Curve))
	}
	return s, s.resolveCurve()
}

// Validate checks o against schema the way NewSorter does.
func (o Order) Validate(schema *arrow.Schema) error {
	_, err := NewSorter(o, schema, SortOptions{})
	return err
}

// Order returns the order s sorts by.
func (s *Sorter) Order() Order { return s.order }

func columnIndex(schema *arrow.Schema, name string) (int, error) {
	idx := schema.FieldIndices(name)
	switch len(idx) {
	case 0:
		return 0, fmt.Errorf("%w: column %q not in schema", ErrSortOrder, name)
	case 1:
		return idx[0], nil
	}
	return 0, fmt.Errorf("%w: column %q appears %d times in schema", ErrSortOrder, name, len(idx))
}

func (s *Sorter) resolveLinear() error {
	if len(s.order.Fields) == 0 {
		return fmt.Errorf("%w: no columns", ErrSortOrder)
	}
	if s.linearShorthandFromGeometry() {
		return nil
	}
	for _, f := range s.order.Fields {
		c, err := columnIndex(s.schema, f.Column)
		if err != nil {
			return err
		}
		t := s.schema.Field(c).Type
		switch {
		case numericSortable(t):
			s.fields = append(s.fields, linearField{Field: f, col: c})
		case stringSortable(t) && !isWKB(t):
			s.fields = append(s.fields, linearField{Field: f, col: c, str: true})
		default:
			return fmt.Errorf("%w: column %q of type %s is not sortable", ErrSortOrder, f.Column, t)
		}
	}
	return nil
}

// linearShorthandFromGeometry resolves the --curve linear order
// ("bbox_minx ASC NULLS LAST, bbox_miny ASC NULLS LAST") on a schema
// without those columns to the lower-left corner of each row's box taken
// from its covering or geometry column, as the bbox columns would hold it.
func (s *Sorter) linearShorthandFromGeometry() bool {
	short, _ := CurveOrder("linear")
	if s.order.String() != short.String() {
		return false
	}
	for _, c := range spatial.BBoxColumns[:2] {
		if len(s.schema.FieldIndices(c)) > 0 {
			return false
		}
	}
	src, err := detectSpatial(s.schema)
	if err != nil {
		return false
	}
	s.spatial = []spatialSource{src}
	for axis, f := range s.order.Fields {
		s.fields = append(s.fields, linearField{Field: f, corner: true, axis: axis})
	}
	return true
}

func (s *Sorter) resolveCurve() error {
	name := s.order.Curve.String()
	if len(s.order.Columns) == 0 {
		src, err := detectSpatial(s.schema)
		if err != nil {
			return err
		}
		s.addSpatial(src)
	}
	for _, col := range s.order.Columns {
		c, err := columnIndex(s.schema, col)
		if err != nil {
			return err
		}
		t := s.schema.Field(c).Type
		if src, ok := spatialColumn(s.schema, col); ok {
			s.addSpatial(src)
			continue
		}
		if !numericSortable(t) || t.ID() == arrow.BOOL {
			return fmt.Errorf("%w: column %q of type %s cannot be a %s dimension: want a number, date, time or timestamp, or a spatial column", ErrSortOrder, col, t, name)
		}
		s.dims = append(s.dims, dimension{src: -1, num: len(s.numeric)})
		s.numeric = append(s.numeric, c)
	}
	n := len(s.dims)
	if (s.order.Curve == CurveSTR || s.order.Curve == CurveKD) && (len(s.spatial) != 1 || n != 2) {
		return fmt.Errorf("%w: %s over %q: want one spatial column (bbox columns, covering or geometry), or none for the row's position", ErrSortOrder, name, s.order.Columns)
	}
	if n < 2 || n > MaxCurveDims {
		return fmt.Errorf("%w: %s over %q has %d dimensions, want 2 to %d", ErrSortOrder, name, s.order.Columns, n, MaxCurveDims)
	}
	s.bits = s.opts.Bits
	if s.bits == 0 {
		s.bits = min(32, 64/n)
	}
	if s.bits < 1 || s.bits > 32 || s.bits*n > 64 {
		return fmt.Errorf("%w: %d bits for %d dimensions, want 1 to %d", ErrBits, s.bits, n, min(32, 64/n))
	}
	return nil
}

func (s *Sorter) addSpatial(src spatialSource) {
	i := len(s.spatial)
	s.spatial = append(s.spatial, src)
	s.dims = append(s.dims, dimension{src: i, axis: 0}, dimension{src: i, axis: 1})
}

// ErrTooManyRows reports a group too large for 32-bit row numbers.
var ErrTooManyRows = errors.New("cluster: too many rows to sort")

// checkBatches checks that every batch has the Sorter's schema and returns
// the total row count.
func (s *Sorter) checkBatches(recs []arrow.RecordBatch) (int, error) {
	total := 0
	for i, r := range recs {
		if !r.Schema().Equal(s.schema) {
			return 0, fmt.Errorf("cluster: batch %d has schema %s, want %s", i, r.Schema(), s.schema)
		}
		total += int(r.NumRows())
	}
	if total > math.MaxInt32 {
		return 0, fmt.Errorf("%w: %d", ErrTooManyRows, total)
	}
	return total, nil
}

// Keys computes the key column for one batch; Sort orders rows by it
// (exposed for tests and benchmarks). For a curve, rows without a position
// get NullKey; positions are normalised over SortOptions.Extent, or over
// this batch alone when that is empty. For a linear order it is the key of
// the leading field: the order-preserving encoding (inverted for DESC),
// with nulls at 0 (NULLS FIRST) or math.MaxUint64 (NULLS LAST); strings
// contribute their first 8 bytes. Ties between a null and an extreme value
// are broken by Sort, not by the key.
func (s *Sorter) Keys(rec arrow.RecordBatch) ([]uint64, error) {
	if _, err := s.checkBatches([]arrow.RecordBatch{rec}); err != nil {
		return nil, err
	}
	n := int(rec.NumRows())
	keys := make([]uint64, n)
	var sc scratch
	if s.order.Curve == CurveLinear {
		f := s.fields[0]
		valid := make([]bool, n)
		if err := s.fieldKeys(keys, valid, rec, f, &sc); err != nil {
			return nil, err
		}
		for i := range keys {
			if !valid[i] {
				keys[i] = 0
				if f.Nulls == NullsLast {
					keys[i] = math.MaxUint64
				}
			}
		}
		return keys, nil
	}
	norms, err := s.normalizers([]arrow.RecordBatch{rec}, n, &sc)
	if err != nil {
		return nil, err
	}
	if err := s.curveKeys(keys, rec, norms, &sc); err != nil {
		return nil, err
	}
	return keys, nil
}

// Sort returns the rows of recs in key order as new record batches of at
// most batchRows rows each, with s's schema. It is stable: rows with equal
// keys keep their input order (batch by batch, row by row). Rows without a
// position (curves) sort last; nulls of a linear field go where its
// NullOrder says. It does not release recs; the caller releases the result.
//
// Memory: besides the input and the output, Sort holds 12 bytes per row
// (a uint64 key and an int32 row number) for a curve, and one column's
// concatenated copy at a time while gathering.
func (s *Sorter) Sort(recs []arrow.RecordBatch, batchRows int) ([]arrow.RecordBatch, error) {
	if batchRows <= 0 {
		return nil, fmt.Errorf("cluster: sort: batchRows is %d, want > 0", batchRows)
	}
	total, err := s.checkBatches(recs)
	if err != nil {
		return nil, err
	}
	if total == 0 {
		return []arrow.RecordBatch{}, nil
	}
	perm, err := s.Permutation(recs)
	if err != nil {
		return nil, err
	}
	return take(recs, perm, batchRows, s.schema, s.opts.Mem)
}

// curvePermutation returns the input row numbers in key order, and the
// keys in that order.
func (s *Sorter) curvePermutation(recs []arrow.RecordBatch, total int) ([]int32, []uint64, error) {
	var sc scratch
	norms, err := s.normalizers(recs, total, &sc)
	if err != nil {
		return nil, nil, err
	}
	keys := make([]uint64, total)
	off := 0
	for _, rec := range recs {
		n := int(rec.NumRows())
		if err := s.curveKeys(keys[off:off+n], rec, norms, &sc); err != nil {
			return nil, nil, err
		}
		off += n
	}
	perm := iota32(total)
	SortKeys(keys, perm)
	return perm, keys, nil
}

func iota32(n int) []int32 {
	p := make([]int32, n)
	for i := range p {
		p[i] = int32(i)
	}
	return p
}
