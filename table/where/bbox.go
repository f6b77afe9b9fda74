package where

import (
	"fmt"
	"strings"

	"github.com/apache/iceberg-go"

	"github.com/geocompact/geocompact/spatial"
)

// parseBBox parses bbox([geom,] minx, miny, maxx, maxy).
func (p *parser) parseBBox() (iceberg.BooleanExpression, error) {
	fn := p.next()
	p.next() // "("
	var geom *column
	if t := p.peek(); t.kind == tokQuotedIdent || (t.kind == tokIdent && !t.isReserved()) {
		c, err := p.resolve(p.next())
		if err != nil {
			return nil, err
		}
		geom = c
		if _, err := p.expect(tokComma, `"," after the geometry column in bbox([column,] minx, miny, maxx, maxy)`); err != nil {
			return nil, err
		}
	}
	var v [4]float64
	var toks [4]token
	names := [4]string{"minx", "miny", "maxx", "maxy"}
	for i := range v {
		t := p.next()
		var f float64
		why := "a number"
		if t.kind == tokNumber {
			f, why = floatValue(&literal{kind: litNumber, text: t.text}, 64)
		}
		if why != "" {
			return nil, p.unexpected(t, fmt.Sprintf("a number for %s in bbox([column,] minx, miny, maxx, maxy)", names[i]))
		}
		v[i], toks[i] = f, t
		sep, want := tokComma, `","`
		if i == 3 {
			sep, want = tokRParen, `")"`
		}
		if _, err := p.expect(sep, want+" in bbox([column,] minx, miny, maxx, maxy)"); err != nil {
			return nil, err
		}
	}
	box := iceberg.BoundingBox{MinX: v[0], MinY: v[1], MaxX: v[2], MaxY: v[3]}
	if box.MinY > box.MaxY {
		return nil, errAt(fn, "bbox miny %s > maxy %s", toks[1].raw, toks[3].raw)
	}
	if geom != nil {
		if _, ok := geom.field.Type.(iceberg.GeometryType); !ok {
			return nil, errAt(geom.tok, "bbox needs a geometry column, and %q is %s", geom.name, geom.field.Type)
		}
		return bboxIntersects(geom.ref(), box), nil
	}
	if e, ok, err := p.bboxColumns(toks, box.MinX > box.MaxX); ok || err != nil {
		return e, err
	}
	return p.bboxGeometry(fn, box)
}

// bboxIntersects is BBoxIntersects on ref, split at the antimeridian into
// two windows when box crosses it (MinX > MaxX).
func bboxIntersects(ref iceberg.Reference, box iceberg.BoundingBox) iceberg.BooleanExpression {
	if box.MinX <= box.MaxX {
		return iceberg.BBoxIntersects(ref, box)
	}
	east, west := box, box
	east.MaxX, west.MinX = 180, -180
	return iceberg.NewOr(iceberg.BBoxIntersects(ref, east), iceberg.BBoxIntersects(ref, west))
}

// bboxColumns is the window test on the four spatial.BBoxColumns, if sc
// has them: a file may intersect unless it lies wholly to one side. For a
// window crossing the antimeridian, a file may intersect when it reaches
// east of minx or west of maxx.
func (p *parser) bboxColumns(toks [4]token, crosses bool) (iceberg.BooleanExpression, bool, error) {
	var cols [4]*column
	for i, name := range spatial.BBoxColumns {
		f, ok := p.sc.FindFieldByName(name)
		if !ok {
			return nil, false, nil
		}
		cols[i] = &column{tok: toks[i], field: f, name: name}
	}
	minx, miny, maxx, maxy := 0, 1, 2, 3
	tests := [4]struct {
		col int
		op  iceberg.Operation
		val int
	}{
		{maxx, iceberg.OpGTEQ, minx},
		{minx, iceberg.OpLTEQ, maxx},
		{maxy, iceberg.OpGTEQ, miny},
		{miny, iceberg.OpLTEQ, maxy},
	}
	var preds [4]iceberg.BooleanExpression
	for i, tc := range tests {
		t := toks[tc.val]
		lit, err := p.convert(cols[tc.col], &literal{kind: litNumber, tok: t, raw: t.raw, text: t.text})
		if err != nil {
			return nil, true, err
		}
		preds[i] = iceberg.LiteralPredicate(tc.op, cols[tc.col].ref(), lit)
	}
	if crosses {
		return iceberg.NewAnd(iceberg.NewOr(preds[0], preds[1]), preds[2], preds[3]), true, nil
	}
	return iceberg.NewAnd(preds[0], preds[1], preds[2], preds[3]), true, nil
}

// bboxGeometry is BBoxIntersects on sc's only top-level geometry column.
func (p *parser) bboxGeometry(fn token, box iceberg.BoundingBox) (iceberg.BooleanExpression, error) {
	var geoms []string
	for _, f := range p.sc.Fields() {
		if _, ok := f.Type.(iceberg.GeometryType); ok {
			geoms = append(geoms, f.Name)
		}
	}
	switch len(geoms) {
	case 0:
		return nil, errAt(fn, "bbox needs the columns %s or a geometry column, and the table has neither (columns: %s)",
			strings.Join(spatial.BBoxColumns[:], ", "), columnList(p.sc))
	case 1:
		return bboxIntersects(iceberg.Reference(geoms[0]), box), nil
	}
	return nil, errAt(fn, "the table has several geometry columns (%s); name one: bbox(column, minx, miny, maxx, maxy)",
		strings.Join(geoms, ", "))
}
