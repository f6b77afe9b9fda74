// Package spatial holds the geometry primitives geocompact works with: planar
// bounding boxes, WKB decoding and envelopes, coordinate reference systems,
// GeoParquet metadata and the discovery of a table's geometry columns.
// It knows nothing about Iceberg commits.
package spatial

import "math"

// Bound is a planar, axis-aligned bounding box with closed intervals
// [MinX, MaxX] × [MinY, MaxY]. Touching boxes intersect. The zero value is
// the degenerate box at the origin; use EmptyBound for "no extent yet".
// Its JSON form is {"minx":..,"miny":..,"maxx":..,"maxy":..}: the format of
// bench's --windows file and of the bbox in the files metadata table.
type Bound struct {
	MinX float64 `json:"minx"`
	MinY float64 `json:"miny"`
	MaxX float64 `json:"maxx"`
	MaxY float64 `json:"maxy"`
}

// EmptyBound returns a box that contains nothing: extending it by any finite
// box yields that box. IsEmpty reports true for it.
func EmptyBound() Bound {
	return Bound{MinX: math.Inf(1), MinY: math.Inf(1), MaxX: math.Inf(-1), MaxY: math.Inf(-1)}
}

// IsEmpty reports whether b contains no point: an inverted interval on either
// axis, or a NaN coordinate.
func (b Bound) IsEmpty() bool {
	return !(b.MinX <= b.MaxX && b.MinY <= b.MaxY)
}

// Extend returns the smallest box containing both b and o. An empty operand
// is ignored.
func (b Bound) Extend(o Bound) Bound {
	if o.IsEmpty() {
		return b
	}
	if b.IsEmpty() {
		return o
	}
	return Bound{
		MinX: minOf(b.MinX, o.MinX), MinY: minOf(b.MinY, o.MinY),
		MaxX: maxOf(b.MaxX, o.MaxX), MaxY: maxOf(b.MaxY, o.MaxY),
	}
}

// minOf is math.Min, its special cases (equal values, so ±0; NaN) left to
// it: Extend runs for every row's box, and two comparisons settle all
// others without math.Min's checks.
func minOf(a, b float64) float64 {
	if a < b {
		return a
	}
	if b < a {
		return b
	}
	return math.Min(a, b)
}

// maxOf is math.Max, as minOf is math.Min.
func maxOf(a, b float64) float64 {
	if a > b {
		return a
	}
	if b > a {
		return b
	}
	return math.Max(a, b)
}

// ExtendPoint returns the smallest box containing b and the point (x, y).
// NaN coordinates are ignored.
func (b Bound) ExtendPoint(x, y float64) Bound {
	if math.IsNaN(x) || math.IsNaN(y) {
		return b
	}
	return b.Extend(Bound{MinX: x, MinY: y, MaxX: x, MaxY: y})
}

// Intersects reports whether the closed boxes b and o share at least one
// point. Touching edges intersect, so a file that might match a window is
// never pruned. Empty boxes intersect nothing.
func (b Bound) Intersects(o Bound) bool {
	if b.IsEmpty() || o.IsEmpty() {
		return false
	}
	return b.MinX <= o.MaxX && o.MinX <= b.MaxX && b.MinY <= o.MaxY && o.MinY <= b.MaxY
}

// Contains reports whether the point (x, y) lies in the closed box b.
func (b Bound) Contains(x, y float64) bool {
	return b.MinX <= x && x <= b.MaxX && b.MinY <= y && y <= b.MaxY
}

// Center returns the centre of b.
func (b Bound) Center() (x, y float64) {
	return b.MinX + (b.MaxX-b.MinX)/2, b.MinY + (b.MaxY-b.MinY)/2
}

// Width and Height return the extent of b on each axis (0 for empty boxes).
func (b Bound) Width() float64 {
	if b.IsEmpty() {
		return 0
	}
	return b.MaxX - b.MinX
}

// Height returns the extent of b on the y axis (0 for empty boxes).
func (b Bound) Height() float64 {
	if b.IsEmpty() {
		return 0
	}
	return b.MaxY - b.MinY
}

// Area returns Width()*Height().
func (b Bound) Area() float64 { return b.Width() * b.Height() }

// World is the lon/lat extent of OGC:CRS84 data.
var World = Bound{MinX: -180, MinY: -90, MaxX: 180, MaxY: 90}
