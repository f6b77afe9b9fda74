package cluster

import (
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/geocompact/geocompact/spatial"
)

// wkbExtension is the Arrow extension name of WKB geometry columns, used by
// iceberg-go for Iceberg v3 geometry.
const wkbExtension = "geoarrow.wkb"

// coveringFields are the fields of a GeoParquet 1.1 bbox covering struct.
var coveringFields = [4]string{"xmin", "ymin", "xmax", "ymax"}

// spatialKind is where a row's bounding box comes from.
type spatialKind int

const (
	fromBBoxColumns spatialKind = iota // four double columns
	fromCovering                       // a struct column with xmin, ymin, xmax, ymax
	fromWKB                            // a binary or geoarrow.wkb column
)

// spatialSource reads the centre of each row's bounding box.
type spatialSource struct {
	kind   spatialKind
	name   string
	cols   [4]int // bbox column indexes, or the covering's child indexes
	col    int    // covering or WKB column index
	isFlt4 bool   // bbox values are float32
}

// isFloat reports whether t is a double or float column.
func isFloat(t arrow.DataType) bool {
	return t.ID() == arrow.FLOAT64 || t.ID() == arrow.FLOAT32
}

// storageType returns the storage type of an extension type, else t.
func storageType(t arrow.DataType) arrow.DataType {
	if ext, ok := t.(arrow.ExtensionType); ok {
		return ext.StorageType()
	}
	return t
}

func isBinary(t arrow.DataType) bool {
	switch storageType(t).ID() {
	case arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW:
		return true
	}
	return false
}

func isWKB(t arrow.DataType) bool {
	ext, ok := t.(arrow.ExtensionType)
	return ok && ext.ExtensionName() == wkbExtension && isBinary(t)
}

// coveringOf returns the child indexes of xmin, ymin, xmax, ymax when t is
// a covering struct of float columns.
func coveringOf(t arrow.DataType) ([4]int, bool) {
	st, ok := t.(*arrow.StructType)
	if !ok {
		return [4]int{}, false
	}
	var idx [4]int
	for i, name := range coveringFields {
		j, ok := st.FieldIdx(name)
		if !ok || !isFloat(st.Field(j).Type) {
			return [4]int{}, false
		}
		idx[i] = j
	}
	return idx, true
}

// spatialColumn returns the source for the named column when it holds
// positions: a covering struct or WKB geometry.
func spatialColumn(schema *arrow.Schema, name string) (spatialSource, bool) {
	idx := schema.FieldIndices(name)
	if len(idx) != 1 {
		return spatialSource{}, false
	}
	t := schema.Field(idx[0]).Type
	if c, ok := coveringOf(t); ok {
		return spatialSource{kind: fromCovering, name: name, col: idx[0], cols: c}, true
	}
	if isWKB(t) || isBinary(t) {
		return spatialSource{kind: fromWKB, name: name, col: idx[0]}, true
	}
	return spatialSource{}, false
}

// detectSpatial finds the row's spatial position in schema: the bbox
// columns, else a covering struct (one named "bbox" first), else a
// geoarrow.wkb column, else a binary column named geometry or geom.
func detectSpatial(schema *arrow.Schema) (spatialSource, error) {
	src := spatialSource{kind: fromBBoxColumns, name: "bbox columns"}
	found := 0
	for i, name := range spatial.BBoxColumns {
		idx := schema.FieldIndices(name)
		if len(idx) == 1 && isFloat(schema.Field(idx[0]).Type) {
			src.cols[i] = idx[0]
			src.isFlt4 = schema.Field(idx[0]).Type.ID() == arrow.FLOAT32
			found++
		}
	}
	if found == 4 {
		t := schema.Field(src.cols[0]).Type.ID()
		same := true
		for _, c := range src.cols {
			same = same && schema.Field(c).Type.ID() == t
		}
		if same {
			return src, nil
		}
	}
	if s, ok := spatialColumn(schema, "bbox"); ok && s.kind == fromCovering {
		return s, nil
	}
	for _, f := range schema.Fields() {
		if s, ok := spatialColumn(schema, f.Name); ok && s.kind == fromCovering {
			return s, nil
		}
	}
	for _, f := range schema.Fields() {
		if isWKB(f.Type) {
			if s, ok := spatialColumn(schema, f.Name); ok {
				return s, nil
			}
		}
	}
	for _, name := range []string{"geometry", "geom"} {
		if s, ok := spatialColumn(schema, name); ok && s.kind == fromWKB {
			return s, nil
		}
	}
	return spatialSource{}, fmt.Errorf("%w: no spatial position in the schema: want the columns %v (double), a covering struct with xmin, ymin, xmax, ymax, or a geometry column", ErrSortOrder, spatial.BBoxColumns)
}

// floatValues returns the values of a float32 or float64 array as float64
// into dst, NaN where null.
func floatValues(dst []float64, a arrow.Array) []float64 {
	dst = dst[:a.Len()]
	switch a := a.(type) {
	case *array.Float64:
		copy(dst, a.Float64Values())
	case *array.Float32:
		for i, v := range a.Float32Values() {
			dst[i] = float64(v)
		}
	}
	if a.NullN() > 0 {
		for i := range dst {
			if a.IsNull(i) {
				dst[i] = math.NaN()
			}
		}
	}
	return dst
}

// centres writes the centre of every row's box into xs and ys, NaN when
// the row has no position (null, empty or NaN). The buffers in sc are
// reused across calls.
func (s *spatialSource) centres(rec arrow.RecordBatch, sc *scratch) (xs, ys []float64, err error) {
	return s.points(rec, sc, false)
}

// corners writes the lower-left corner of every row's box into xs and ys,
// NaN when the row has no position.
func (s *spatialSource) corners(rec arrow.RecordBatch, sc *scratch) (xs, ys []float64, err error) {
	return s.points(rec, sc, true)
}

// lower is the low end of an interval, NaN when it is empty or NaN.
func lower(lo, hi float64) float64 {
	if !(lo <= hi) {
		return math.NaN()
	}
	return lo
}

// points reduces each row's box to its lower-left corner (corner) or its
// centre.
func (s *spatialSource) points(rec arrow.RecordBatch, sc *scratch, corner bool) (xs, ys []float64, err error) {
	n := int(rec.NumRows())
	xs, ys = grow(&sc.xs, n), grow(&sc.ys, n)
	switch s.kind {
	case fromBBoxColumns, fromCovering:
		var cols [4]arrow.Array
		if s.kind == fromBBoxColumns {
			for i, c := range s.cols {
				cols[i] = rec.Column(c)
			}
		} else {
			st := rec.Column(s.col).(*array.Struct)
			for i, c := range s.cols {
				cols[i] = st.Field(c)
			}
			defer func() {
				if st.NullN() > 0 {
					for i := range n {
						if st.IsNull(i) {
							xs[i], ys[i] = math.NaN(), math.NaN()
						}
					}
				}
			}()
		}
		minx := floatValues(grow(&sc.a, n), cols[0])
		miny := floatValues(grow(&sc.b, n), cols[1])
		maxx := floatValues(xs, cols[2])
		maxy := floatValues(ys, cols[3])
		if corner {
			for i := range n {
				xs[i] = lower(minx[i], maxx[i])
				ys[i] = lower(miny[i], maxy[i])
			}
		} else {
			for i := range n {
				xs[i] = centre(minx[i], maxx[i])
				ys[i] = centre(miny[i], maxy[i])
			}
		}
	case fromWKB:
		pick := centre
		if corner {
			pick = lower
		}
		if err := wkbPoints(rec.Column(s.col), xs, ys, pick); err != nil {
			return nil, nil, fmt.Errorf("column %q: %w", s.name, err)
		}
	}
	return xs, ys, nil
}

// centre is Bound.Center for one axis, NaN for an empty (inverted) or NaN
// interval.
func centre(lo, hi float64) float64 {
	if !(lo <= hi) {
		return math.NaN()
	}
	return lo + (hi-lo)/2
}

type binaryValues interface {
	arrow.Array
	Value(i int) []byte
}

func wkbPoints(a arrow.Array, xs, ys []float64, pick func(lo, hi float64) float64) error {
	if ext, ok := a.(array.ExtensionArray); ok {
		a = ext.Storage()
	}
	bin, ok := a.(binaryValues)
	if !ok {
		return fmt.Errorf("%w: %s is not binary", ErrSortOrder, a.DataType())
	}
	for i := range xs {
		if bin.IsNull(i) {
			xs[i], ys[i] = math.NaN(), math.NaN()
			continue
		}
		b, err := spatial.Envelope(bin.Value(i))
		if err != nil {
			return fmt.Errorf("row %d: %w", i, err)
		}
		if b.IsEmpty() {
			xs[i], ys[i] = math.NaN(), math.NaN()
			continue
		}
		xs[i], ys[i] = pick(b.MinX, b.MaxX), pick(b.MinY, b.MaxY)
	}
	return nil
}

// numericSortable reports whether a column of type t has an
// order-preserving uint64 encoding.
func numericSortable(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.FLOAT32, arrow.FLOAT64, arrow.DATE32, arrow.DATE64,
		arrow.TIMESTAMP, arrow.TIME32, arrow.TIME64, arrow.DURATION, arrow.BOOL:
		return true
	}
	return false
}

// stringSortable reports whether a column of type t sorts by comparing
// byte strings.
func stringSortable(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW,
		arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW:
		return true
	}
	return false
}

// encodeColumn writes the order-preserving encoding of every value of a
// numeric array into dst and reports nulls in valid. Float NaNs encode as
// math.MaxUint64 and, when nanInvalid is set, also count as null.
func encodeColumn(dst []uint64, valid []bool, a arrow.Array, nanInvalid bool) error {
	if !encodeValues(dst, a) {
		return fmt.Errorf("%w: type %s has no numeric order", ErrSortOrder, a.DataType())
	}
	for i := range valid {
		valid[i] = a.IsValid(i)
	}
	if nanInvalid && (a.DataType().ID() == arrow.FLOAT64 || a.DataType().ID() == arrow.FLOAT32) {
		for i, k := range dst {
			if k == math.MaxUint64 {
				valid[i] = false
			}
		}
	}
	return nil
}

// encodeValues writes a's values as order-preserving keys into dst; it
// reports false for a type without a numeric order.
func encodeValues(dst []uint64, a arrow.Array) bool {
	switch a := a.(type) {
	case *array.Int8:
		encodeInts(dst, a.Int8Values())
	case *array.Int16:
		encodeInts(dst, a.Int16Values())
	case *array.Int32:
		encodeInts(dst, a.Int32Values())
	case *array.Int64:
		encodeInts(dst, a.Int64Values())
	case *array.Uint8:
		encodeUints(dst, a.Uint8Values())
	case *array.Uint16:
		encodeUints(dst, a.Uint16Values())
	case *array.Uint32:
		encodeUints(dst, a.Uint32Values())
	case *array.Uint64:
		copy(dst, a.Uint64Values())
	case *array.Float32:
		for i, v := range a.Float32Values() {
			dst[i] = OrderedFloat64(float64(v))
		}
	case *array.Float64:
		for i, v := range a.Float64Values() {
			dst[i] = OrderedFloat64(v)
		}
	case *array.Date32:
		encodeInts(dst, a.Date32Values())
	case *array.Date64:
		encodeInts(dst, a.Date64Values())
	case *array.Timestamp:
		encodeInts(dst, a.TimestampValues())
	case *array.Time32:
		encodeInts(dst, a.Time32Values())
	case *array.Time64:
		encodeInts(dst, a.Time64Values())
	case *array.Duration:
		encodeInts(dst, a.DurationValues())
	case *array.Boolean:
		for i := range dst {
			dst[i] = 0
			if a.Value(i) {
				dst[i] = 1
			}
		}
	default:
		return false
	}
	return true
}

func encodeInts[T ~int8 | ~int16 | ~int32 | ~int64](dst []uint64, vs []T) {
	for i, v := range vs {
		dst[i] = OrderedInt64(int64(v))
	}
}

func encodeUints[T ~uint8 | ~uint16 | ~uint32](dst []uint64, vs []T) {
	for i, v := range vs {
		dst[i] = uint64(v)
	}
}

// scratch holds per-batch buffers reused across the batches of one call.
type scratch struct {
	xs, ys, a, b []float64
	enc0         []uint64
	valid0, null []bool
	cells        [][]uint32
}

func grow[T any](buf *[]T, n int) []T {
	if cap(*buf) < n {
		*buf = make([]T, n)
	}
	*buf = (*buf)[:n]
	return *buf
}
