package spatial

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/twpayne/go-geom"
	"github.com/twpayne/go-geom/encoding/ewkb"
	"github.com/twpayne/go-geom/encoding/wkb"
	"github.com/twpayne/go-geom/encoding/wkbcommon"
)

// ErrInvalidWKB is the category of every WKB decoding failure. A
// *WKBError wraps it, so errors.Is(err, ErrInvalidWKB) holds for all of them.
var ErrInvalidWKB = errors.New("spatial: invalid WKB")

// WKBError reports where and why a WKB value could not be decoded. Offset is
// the byte offset into the value at which the problem was found. Code is a
// stable short name for the defect (one of the WKBCode… constants) so
// validators can count them; Reason is the human explanation.
type WKBError struct {
	Offset int
	Code   string
	Reason string
}

// Error implements error.
func (e *WKBError) Error() string {
	return fmt.Sprintf("%s at byte %d: %s", ErrInvalidWKB, e.Offset, e.Reason)
}

// Unwrap returns ErrInvalidWKB.
func (e *WKBError) Unwrap() error { return ErrInvalidWKB }

// Codes carried by WKBError.Code. They match the check codes of package
// validate.
const (
	WKBCodeTruncated = "wkb.truncated" // fewer bytes than the header or a count needs
	WKBCodeType      = "wkb.type"      // bad byte order, unknown or misplaced type code
	WKBCodeNonFinite = "wkb.nonfinite" // NaN or Inf coordinate (other than an empty point)
	WKBCodeRingOpen  = "wkb.ring-open" // polygon ring whose first and last points differ
	WKBCodeRingShort = "wkb.ring-short"
	WKBCodeTrailing  = "wkb.trailing" // bytes left after the geometry
	WKBCodeDepth     = "wkb.depth"    // collections nested deeper than MaxWKBDepth
)

// MaxWKBDepth bounds the nesting of geometry collections. Deeper input is
// rejected rather than recursed into, so a crafted value cannot exhaust the
// stack.
const MaxWKBDepth = 32

// GeometryType is the base OGC geometry type, without dimension flags.
type GeometryType uint32

// The seven OGC simple-feature types that WKB encodes.
const (
	TypePoint              GeometryType = 1
	TypeLineString         GeometryType = 2
	TypePolygon            GeometryType = 3
	TypeMultiPoint         GeometryType = 4
	TypeMultiLineString    GeometryType = 5
	TypeMultiPolygon       GeometryType = 6
	TypeGeometryCollection GeometryType = 7
)

var typeNames = [...]string{
	TypePoint: "Point", TypeLineString: "LineString", TypePolygon: "Polygon",
	TypeMultiPoint: "MultiPoint", TypeMultiLineString: "MultiLineString",
	TypeMultiPolygon: "MultiPolygon", TypeGeometryCollection: "GeometryCollection",
}

// String returns the GeoParquet spelling of t, e.g. "MultiPolygon".
func (t GeometryType) String() string {
	if t >= 1 && int(t) < len(typeNames) {
		return typeNames[t]
	}
	return fmt.Sprintf("GeometryType(%d)", uint32(t))
}

// ParseGeometryType maps a GeoParquet type name ("Point", "MultiPolygon",
// optionally with a " Z" suffix, which is ignored) to its GeometryType.
func ParseGeometryType(s string) (GeometryType, bool) {
	if len(s) > 2 && s[len(s)-2:] == " Z" {
		s = s[:len(s)-2]
	}
	for i, n := range typeNames {
		if n != "" && n == s {
			return GeometryType(i), true
		}
	}
	return 0, false
}

// EWKB flag bits (PostGIS) in the high byte of the type code.
const (
	ewkbZ    = 0x80000000
	ewkbM    = 0x40000000
	ewkbSRID = 0x20000000
)

// wkbHeader is a decoded geometry header.
type wkbHeader struct {
	order binary.ByteOrder
	typ   GeometryType
	dims  int // coordinates per point: 2, 3 or 4
	srid  bool
	ewkb  bool // the code uses PostGIS flag bits
	iso   bool // the code uses ISO dimension thousands
}

// parseHeader reads the byte order and type code at b[off:], returning the
// header and the offset just past it (and past an EWKB SRID, if present).
func parseHeader(b []byte, off int) (wkbHeader, int, error) {
	var h wkbHeader
	if len(b)-off < 5 {
		return h, off, wkbErr(off, WKBCodeTruncated, "need 5 header bytes, have %d", len(b)-off)
	}
	switch b[off] {
	case 0:
		h.order = binary.BigEndian
	case 1:
		h.order = binary.LittleEndian
	default:
		return h, off, wkbErr(off, WKBCodeType, "byte order flag %d, want 0 or 1", b[off])
	}
	code := h.order.Uint32(b[off+1:])
	hasZ, hasM := code&ewkbZ != 0, code&ewkbM != 0
	h.srid = code&ewkbSRID != 0
	h.ewkb = code&(ewkbZ|ewkbM|ewkbSRID) != 0
	iso := code &^ (ewkbZ | ewkbM | ewkbSRID)
	h.iso = iso >= 1000
	if iso > 3007 {
		return h, off, wkbErr(off+1, WKBCodeType, "unknown geometry type code %d", code)
	}
	if h.ewkb && iso >= 1000 {
		// An EWKB flag (Z, M or SRID) on an ISO code is neither form:
		// PostGIS never writes it, and go-geom refuses it.
		return h, off, wkbErr(off+1, WKBCodeType, "geometry type code %d mixes EWKB flags and ISO dimensions", code)
	}
	switch iso / 1000 {
	case 1:
		hasZ = true
	case 2:
		hasM = true
	case 3:
		hasZ, hasM = true, true
	}
	h.typ = GeometryType(iso % 1000)
	if h.typ < TypePoint || h.typ > TypeGeometryCollection {
		return h, off, wkbErr(off+1, WKBCodeType, "unknown geometry type code %d", code)
	}
	h.dims = 2
	if hasZ {
		h.dims++
	}
	if hasM {
		h.dims++
	}
	off += 5
	if h.srid {
		if len(b)-off < 4 {
			return h, off, wkbErr(off, WKBCodeTruncated, "need 4 SRID bytes, have %d", len(b)-off)
		}
		off += 4
	}
	return h, off, nil
}

func wkbErr(off int, code, format string, args ...any) *WKBError {
	return &WKBError{Offset: off, Code: code, Reason: fmt.Sprintf(format, args...)}
}

// readCount reads a uint32 element count at b[off:] and checks that at least
// count*minSize bytes remain after it, so no caller ever sizes work or an
// allocation from a count the input cannot back.
func readCount(b []byte, off int, order binary.ByteOrder, minSize int, what string) (int, int, error) {
	if len(b)-off < 4 {
		return 0, off, wkbErr(off, WKBCodeTruncated, "need 4 bytes for %s count, have %d", what, len(b)-off)
	}
	n := uint64(order.Uint32(b[off:]))
	off += 4
	if rem := uint64(len(b) - off); n*uint64(minSize) > rem {
		return 0, off - 4, wkbErr(off-4, WKBCodeTruncated, "%s count %d needs at least %d bytes, %d remain", what, n, n*uint64(minSize), rem)
	}
	return int(n), off, nil
}

// Envelope returns the planar bounding box of the WKB geometry b without
// decoding it into objects: it walks the bytes once, checking every header
// and count against the bytes that remain, and allocates nothing.
//
// It accepts ISO WKB and PostGIS EWKB (SRID and Z/M flags), with Z, M and
// ZM coordinates (only X and Y contribute to the box), in either byte order,
// for all seven OGC types including nested collections. Empty geometries —
// zero-count ones, and POINT EMPTY encoded as NaN coordinates — yield
// EmptyBound(). Any defect returns a *WKBError wrapping ErrInvalidWKB:
// truncation, unknown types, NaN or Inf coordinates, unclosed rings or rings
// with fewer than four points, and trailing bytes.
func Envelope(b []byte) (Bound, error) {
	// Fast path for the commonest value, a little-endian 2D point.
	if len(b) == 21 && b[0] == 1 && binary.LittleEndian.Uint32(b[1:]) == uint32(TypePoint) {
		x := math.Float64frombits(binary.LittleEndian.Uint64(b[5:]))
		y := math.Float64frombits(binary.LittleEndian.Uint64(b[13:]))
		if x-x == 0 && y-y == 0 {
			return Bound{MinX: x, MinY: y, MaxX: x, MaxY: y}, nil
		}
		// NaN or Inf: the general path tells empty from invalid.
	}
	s := scanner{b: b, bound: EmptyBound()}
	if err := s.scan(); err != nil {
		return EmptyBound(), err
	}
	return s.bound, nil
}

// scan walks the whole value and checks nothing follows it.
func (s *scanner) scan() error {
	off, err := s.geometry(0, 0, nil, 0)
	if err != nil {
		return err
	}
	if off != len(s.b) {
		return wkbErr(off, WKBCodeTrailing, "%d bytes after the geometry", len(s.b)-off)
	}
	return nil
}

// DecodeWKB decodes b into a go-geom geometry. It first runs the same
// bounded scan as Envelope, so go-geom only ever sees a value whose counts
// the bytes back (its own decoder sizes allocations from them) and every
// defect Envelope reports is reported here with the same *WKBError. EWKB
// input keeps its SRID; POINT EMPTY decodes as an empty point.
func DecodeWKB(b []byte) (geom.T, error) {
	s := scanner{b: b, bound: EmptyBound()}
	if err := s.scan(); err != nil {
		return nil, err
	}
	var (
		g   geom.T
		err error
	)
	if s.ewkb {
		g, err = ewkb.Unmarshal(b)
	} else {
		g, err = wkb.Unmarshal(b, wkbcommon.WKBOptionEmptyPointHandling(wkbcommon.EmptyPointHandlingNaN))
	}
	if err != nil {
		// The scan accepts only what go-geom decodes; reaching this is a
		// disagreement between the two, reported rather than hidden.
		return nil, &WKBError{Offset: 0, Code: WKBCodeType, Reason: "go-geom: " + err.Error()}
	}
	return g, nil
}

// EncodeWKB encodes g as little-endian ISO WKB (Z/M as type codes 1000,
// 2000 and 3000; any SRID is dropped). Empty points are written as NaN
// coordinates, the encoding DecodeWKB and Envelope accept as empty.
func EncodeWKB(g geom.T) ([]byte, error) {
	b, err := wkb.Marshal(g, binary.LittleEndian, wkbcommon.WKBOptionEmptyPointHandling(wkbcommon.EmptyPointHandlingNaN))
	if err != nil {
		return nil, fmt.Errorf("encode WKB: %w", err)
	}
	return b, nil
}

// scanner accumulates the envelope of a WKB value as it is walked.
type scanner struct {
	b     []byte
	bound Bound
	ewkb  bool // the outermost header uses EWKB flag bits
}

// geometry scans one geometry at off. want, if non-zero, is the type a
// Multi* container requires of its members.
//
// Members must have their container's dimensions and must not switch
// between the ISO and EWKB spellings of them or carry their own SRID:
// OGC forbids the first, and no writer produces the others.
func (s *scanner) geometry(off int, want GeometryType, parent *wkbHeader, depth int) (int, error) {
	if depth > MaxWKBDepth {
		return off, wkbErr(off, WKBCodeDepth, "geometry nested deeper than %d", MaxWKBDepth)
	}
	start := off
	h, off, err := parseHeader(s.b, off)
	if err != nil {
		return off, err
	}
	if parent == nil {
		s.ewkb = h.ewkb
	} else {
		switch {
		case want != 0 && h.typ != want:
			return start, wkbErr(start+1, WKBCodeType, "%s inside a Multi%s", h.typ, want)
		case h.dims != parent.dims:
			return start, wkbErr(start+1, WKBCodeType, "%d-dimensional member of a %d-dimensional %s", h.dims, parent.dims, parent.typ)
		case h.srid:
			return start, wkbErr(start+1, WKBCodeType, "member of a %s carries its own SRID", parent.typ)
		case (h.ewkb && parent.iso) || (h.iso && parent.ewkb):
			return start, wkbErr(start+1, WKBCodeType, "member mixes ISO and EWKB type codes")
		}
	}
	stride := 8 * h.dims
	switch h.typ {
	case TypePoint:
		return s.point(off, h, stride)
	case TypeLineString:
		return s.points(off, h, stride, 0)
	case TypePolygon:
		n, off, err := readCount(s.b, off, h.order, 4, "ring")
		if err != nil {
			return off, err
		}
		for range n {
			if off, err = s.points(off, h, stride, 4); err != nil {
				return off, err
			}
		}
		return off, nil
	case TypeMultiPoint, TypeMultiLineString, TypeMultiPolygon, TypeGeometryCollection:
		member := h.typ - 3 // MultiPoint(4) → Point(1), …
		if h.typ == TypeGeometryCollection {
			member = 0
		}
		n, off, err := readCount(s.b, off, h.order, 9, "member")
		if err != nil {
			return off, err
		}
		for range n {
			if off, err = s.geometry(off, member, &h, depth+1); err != nil {
				return off, err
			}
		}
		return off, nil
	}
	panic("unreachable: parseHeader validated the type")
}

// point scans a single Point body. All-NaN ordinates are the conventional
// encoding of POINT EMPTY and are skipped; any other NaN or an Inf is an
// error.
func (s *scanner) point(off int, h wkbHeader, stride int) (int, error) {
	if len(s.b)-off < stride {
		return off, wkbErr(off, WKBCodeTruncated, "point needs %d bytes, have %d", stride, len(s.b)-off)
	}
	x := math.Float64frombits(h.order.Uint64(s.b[off:]))
	y := math.Float64frombits(h.order.Uint64(s.b[off+8:]))
	if math.IsNaN(x) && math.IsNaN(y) && s.allNaN(off, h) {
		return off + stride, nil
	}
	if err := s.finite(off, h, x, y); err != nil {
		return off, err
	}
	s.bound = s.bound.Extend(Bound{MinX: x, MinY: y, MaxX: x, MaxY: y})
	return off + stride, nil
}

// allNaN reports whether the Z and M ordinates of the point at off are NaN
// too, as they are in an empty point.
func (s *scanner) allNaN(off int, h wkbHeader) bool {
	for d := 2; d < h.dims; d++ {
		if !math.IsNaN(math.Float64frombits(h.order.Uint64(s.b[off+8*d:]))) {
			return false
		}
	}
	return true
}

// finite checks every ordinate of the point at off (x and y already read).
func (s *scanner) finite(off int, h wkbHeader, x, y float64) error {
	if isNonFinite(x) || isNonFinite(y) {
		return wkbErr(off, WKBCodeNonFinite, "coordinate (%v, %v)", x, y)
	}
	for d := 2; d < h.dims; d++ {
		if v := math.Float64frombits(h.order.Uint64(s.b[off+8*d:])); isNonFinite(v) {
			return wkbErr(off+8*d, WKBCodeNonFinite, "ordinate %d is %v", d, v)
		}
	}
	return nil
}

func isNonFinite(v float64) bool { return v-v != 0 } // NaN or ±Inf

// points scans a counted point sequence (a LineString or a ring). When
// minRing is non-zero the sequence is a polygon ring: it must be empty or
// have at least minRing points and be closed.
func (s *scanner) points(off int, h wkbHeader, stride, minRing int) (int, error) {
	n, off, err := readCount(s.b, off, h.order, stride, "point")
	if err != nil {
		return off, err
	}
	if n == 0 {
		return off, nil
	}
	if minRing > 0 && n < minRing {
		return off - 4, wkbErr(off-4, WKBCodeRingShort, "ring has %d points, want >= %d", n, minRing)
	}
	b := s.bound
	end := off + n*stride
	little := h.order == binary.ByteOrder(binary.LittleEndian)
	for p := off; p < end; p += stride {
		var x, y float64
		if little {
			x = math.Float64frombits(binary.LittleEndian.Uint64(s.b[p:]))
			y = math.Float64frombits(binary.LittleEndian.Uint64(s.b[p+8:]))
		} else {
			x = math.Float64frombits(binary.BigEndian.Uint64(s.b[p:]))
			y = math.Float64frombits(binary.BigEndian.Uint64(s.b[p+8:]))
		}
		if x-x != 0 || y-y != 0 {
			return p, wkbErr(p, WKBCodeNonFinite, "coordinate (%v, %v)", x, y)
		}
		if h.dims > 2 {
			if err := s.finite(p, h, x, y); err != nil {
				return p, err
			}
		}
		if x < b.MinX {
			b.MinX = x
		}
		if x > b.MaxX {
			b.MaxX = x
		}
		if y < b.MinY {
			b.MinY = y
		}
		if y > b.MaxY {
			b.MaxY = y
		}
	}
	if minRing > 0 {
		last := end - stride
		for d := 0; d < 16; d += 8 { // X and Y decide closure; +0 == -0
			a := math.Float64frombits(h.order.Uint64(s.b[off+d:]))
			z := math.Float64frombits(h.order.Uint64(s.b[last+d:]))
			if a != z {
				return off - 4, wkbErr(off-4, WKBCodeRingOpen, "ring of %d points is not closed", n)
			}
		}
	}
	s.bound = b
	return end, nil
}

// WKBType returns the geometry type in the header of the WKB value b
// without scanning the rest of it.
func WKBType(b []byte) (GeometryType, error) {
	h, _, err := parseHeader(b, 0)
	if err != nil {
		return 0, err
	}
	return h.typ, nil
}
