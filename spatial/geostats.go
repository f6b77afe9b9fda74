package spatial

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// GeoStats accumulates what GeoParquet metadata states about the values of
// a geometry column: their extent and the geometry types present (with a
// Z suffix for values with z coordinates). The zero value is not ready;
// use NewGeoStats. It is not safe for concurrent use.
type GeoStats struct {
	bound Bound
	types uint16 // bit 2*(type-1)+z
	rows  int64
}

// NewGeoStats returns an empty accumulator.
func NewGeoStats() *GeoStats { return &GeoStats{bound: EmptyBound()} }

// Add records the WKB value b. Invalid WKB is an error and records nothing.
func (s *GeoStats) Add(b []byte) error {
	env, err := Envelope(b)
	if err != nil {
		return err
	}
	return s.AddWithEnvelope(b, env)
}

// AddWithEnvelope records the WKB value b whose envelope env the caller
// already computed; only b's header is read.
func (s *GeoStats) AddWithEnvelope(b []byte, env Bound) error {
	h, _, err := parseHeader(b, 0)
	if err != nil {
		return err
	}
	bit := 2 * (uint(h.typ) - 1)
	if h.dims == 4 || (h.dims == 3 && !headerHasMOnly(b, h)) {
		bit++
	}
	s.types |= 1 << bit
	s.rows++
	if !env.IsEmpty() {
		s.bound = s.bound.Extend(env)
	}
	return nil
}

// headerHasMOnly reports whether a 3-coordinate header is XYM rather than
// XYZ.
func headerHasMOnly(b []byte, h wkbHeader) bool {
	code := h.order.Uint32(b[1:])
	if h.ewkb {
		return code&ewkbM != 0 && code&ewkbZ == 0
	}
	return (code%10000)/1000 == 2
}

// Merge adds o's values to s.
func (s *GeoStats) Merge(o *GeoStats) {
	s.types |= o.types
	s.rows += o.rows
	s.bound = s.bound.Extend(o.bound)
}

// Rows returns the number of values recorded.
func (s *GeoStats) Rows() int64 { return s.rows }

// Bound returns the extent of the values recorded; empty when none had
// coordinates.
func (s *GeoStats) Bound() Bound { return s.bound }

// Types returns the GeoParquet names of the geometry types recorded, in
// type-code order: "Point", "Point Z", "Polygon", ...
func (s *GeoStats) Types() []string {
	out := []string{}
	for t := TypePoint; t <= TypeGeometryCollection; t++ {
		for z := range uint(2) {
			if s.types&(1<<(2*(uint(t)-1)+z)) == 0 {
				continue
			}
			name := t.String()
			if z == 1 {
				name += " Z"
			}
			out = append(out, name)
		}
	}
	return out
}

// BBoxSlice returns the extent as [xmin, ymin, xmax, ymax], or nil when
// empty.
func (s *GeoStats) BBoxSlice() []float64 {
	if s.bound.IsEmpty() {
		return nil
	}
	return []float64{s.bound.MinX, s.bound.MinY, s.bound.MaxX, s.bound.MaxY}
}

// Metadata returns the GeoParquet 1.1 document for a file whose geometry
// column cols.Geometry holds the values recorded: WKB encoding, the types
// and bbox of those values, and the CRS as PROJJSON (omitted for
// OGC:CRS84, the default; null when cols.CRS is unknown). A covering is
// written when cols names a covering struct column: GeoParquet 1.1 covers
// a geometry only with a struct column's fields, so four top-level bbox
// columns get none.
func (s *GeoStats) Metadata(cols Columns) *GeoMetadata {
	m := NewGeoMetadata(cols.Geometry, cols.CRS, s.Types())
	c := m.Columns[cols.Geometry]
	if cols.CRS == "" {
		c.CRS = []byte("null")
	}
	c.BBox = s.BBoxSlice()
	if cols.Covering != "" {
		p := func(i int) []string { return []string{cols.Covering, cols.CoveringFields[i]} }
		c.Covering = &Covering{BBox: CoveringBBox{XMin: p(0), YMin: p(1), XMax: p(2), YMax: p(3)}}
	}
	m.Columns[cols.Geometry] = c
	return m
}

// AddArray records every non-null value of a WKB array (see WKBValues).
// Values that are not valid WKB are skipped: they have no extent or type
// to state. It returns the number skipped.
func (s *GeoStats) AddArray(a arrow.Array) int {
	v, ok := WKBValues(a)
	if !ok {
		return a.Len() - a.NullN()
	}
	skipped := 0
	for i := range v.Len() {
		if !v.IsNull(i) && s.Add(v.Value(i)) != nil {
			skipped++
		}
	}
	return skipped
}

// BinaryValues is what reading WKB needs of an Arrow array, whatever its
// binary layout.
type BinaryValues interface {
	Len() int
	IsNull(i int) bool
	Value(i int) []byte
}

// WKBValues returns the values of a WKB array: binary, large binary, binary
// view, or an extension type over one (such as geoarrow.wkb). It reports
// false for any other type.
func WKBValues(a arrow.Array) (BinaryValues, bool) {
	if ext, ok := a.(array.ExtensionArray); ok {
		a = ext.Storage()
	}
	switch a := a.(type) {
	case *array.Binary:
		return a, true
	case *array.LargeBinary:
		return a, true
	case *array.BinaryView:
		return a, true
	}
	return nil, false
}
