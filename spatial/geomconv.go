package spatial

import (
	"fmt"

	"github.com/paulmach/orb"
	"github.com/twpayne/go-geom"
)

// BoundOf returns the XY bounding box of a go-geom geometry, or EmptyBound
// for an empty one. Unlike geom.T.Bounds it skips the NaN coordinates of
// empty points inside a MultiPoint.
func BoundOf(g geom.T) Bound {
	b := EmptyBound()
	if g == nil {
		return b
	}
	if gc, ok := g.(*geom.GeometryCollection); ok {
		for _, m := range gc.Geoms() {
			b = b.Extend(BoundOf(m))
		}
		return b
	}
	flat, stride := g.FlatCoords(), g.Stride()
	for i := 0; stride >= 2 && i+1 < len(flat); i += stride {
		b = b.ExtendPoint(flat[i], flat[i+1])
	}
	return b
}

// OrbBound converts an orb bound to a Bound.
func OrbBound(b orb.Bound) Bound {
	return Bound{MinX: b.Min[0], MinY: b.Min[1], MaxX: b.Max[0], MaxY: b.Max[1]}
}

// Orb converts b to an orb bound. An empty b has no orb equivalent and
// converts to orb's inverted bound, which orb also treats as empty.
func (b Bound) Orb() orb.Bound {
	return orb.Bound{Min: orb.Point{b.MinX, b.MinY}, Max: orb.Point{b.MaxX, b.MaxY}}
}

// ToOrb converts a go-geom geometry to its orb equivalent, keeping X and Y
// only: orb is planar 2D. Empty points have no orb form and are an error.
func ToOrb(g geom.T) (orb.Geometry, error) {
	switch g := g.(type) {
	case *geom.Point:
		if g.Empty() {
			return nil, fmt.Errorf("%w: orb has no empty point", ErrInvalidWKB)
		}
		return orb.Point{g.X(), g.Y()}, nil
	case *geom.LineString:
		return orbLine(g.FlatCoords(), g.Stride()), nil
	case *geom.Polygon:
		return orbPolygon(g), nil
	case *geom.MultiPoint:
		mp := make(orb.MultiPoint, 0, g.NumPoints())
		for i := range g.NumPoints() {
			p := g.Point(i)
			if p.Empty() {
				continue
			}
			mp = append(mp, orb.Point{p.X(), p.Y()})
		}
		return mp, nil
	case *geom.MultiLineString:
		ml := make(orb.MultiLineString, 0, g.NumLineStrings())
		for i := range g.NumLineStrings() {
			ml = append(ml, orbLine(g.LineString(i).FlatCoords(), g.Stride()))
		}
		return ml, nil
	case *geom.MultiPolygon:
		mp := make(orb.MultiPolygon, 0, g.NumPolygons())
		for i := range g.NumPolygons() {
			mp = append(mp, orbPolygon(g.Polygon(i)))
		}
		return mp, nil
	case *geom.GeometryCollection:
		c := make(orb.Collection, 0, g.NumGeoms())
		for _, m := range g.Geoms() {
			o, err := ToOrb(m)
			if err != nil {
				return nil, err
			}
			c = append(c, o)
		}
		return c, nil
	}
	return nil, fmt.Errorf("%w: unsupported geometry %T", ErrInvalidWKB, g)
}

func orbLine(flat []float64, stride int) orb.LineString {
	ls := make(orb.LineString, 0, len(flat)/stride)
	for i := 0; i+1 < len(flat); i += stride {
		ls = append(ls, orb.Point{flat[i], flat[i+1]})
	}
	return ls
}

func orbPolygon(p *geom.Polygon) orb.Polygon {
	poly := make(orb.Polygon, 0, p.NumLinearRings())
	for i := range p.NumLinearRings() {
		poly = append(poly, orb.Ring(orbLine(p.LinearRing(i).FlatCoords(), p.Stride())))
	}
	return poly
}
