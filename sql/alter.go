package sql

import (
	"fmt"
	"slices"
	"strings"

	"github.com/geocompact/geocompact/cluster"
)

// CommandAlter is the command of an ALTER TABLE statement.
const CommandAlter = "ALTER TABLE"

// Alter is Spark's ALTER TABLE statement, in the forms that record a
// table's properties and layout (Iceberg's Spark extension gives WRITE
// ORDERED BY and WRITE UNORDERED):
//
//	ALTER TABLE table SET TBLPROPERTIES ('key' = 'value', …)
//	ALTER TABLE table UNSET TBLPROPERTIES [IF EXISTS] ('key', …)
//	ALTER TABLE table WRITE [LOCALLY] ORDERED BY order
//	ALTER TABLE table WRITE UNORDERED
//	table := [catalog.]namespace.name | delta.`location` | 'location'
//
// Exactly one of Set, Unset, SortOrder and Unordered is given.
type Alter struct {
	// Table is an Iceberg table's name, its parts as written (back-quotes
	// removed): namespace.table, or catalog.namespace.table when the first
	// part names a catalog. Nil for a Delta table.
	Table []string
	// Location is a Delta table's location, named delta.`location` or
	// 'location' as VACUUM and OPTIMIZE name it; "" for an Iceberg table.
	Location string
	// Set holds SET TBLPROPERTIES' pairs, values as written (a number or
	// boolean as its text).
	Set map[string]string
	// Unset lists UNSET TBLPROPERTIES' keys in order; IfExists is IF
	// EXISTS, without which a key the table lacks is an error.
	Unset    []string
	IfExists bool
	// SortOrder is WRITE ORDERED BY's order in cluster.ParseOrder's
	// canonical form: "ts ASC NULLS FIRST, id DESC NULLS LAST",
	// "zorder(a, b)", "hilbert(a, b)" or "str(geometry)".
	SortOrder string
	// Unordered is WRITE UNORDERED: the table records no layout.
	Unordered bool
}

// TableName is the statement's table as the CLI names it: "ns.t" (with
// the catalog part, if any), or the Delta table's location.
func (a *Alter) TableName() string {
	if a.Location != "" {
		return a.Location
	}
	return strings.Join(a.Table, ".")
}

// alterStatement reads an ALTER TABLE statement after ALTER.
func (p *parser) alterStatement() (*Alter, error) {
	if err := p.advance(); err != nil {
		return nil, err
	}
	if !p.tok.keyword("TABLE") {
		return nil, p.unexpected("TABLE after ALTER (geocompact runs ALTER TABLE only)")
	}
	if err := p.advance(); err != nil {
		return nil, err
	}
	a := &Alter{}
	if err := p.alterTable(a); err != nil {
		return nil, err
	}
	var err error
	switch {
	case p.tok.keyword("SET"), p.tok.keyword("UNSET"):
		err = p.tblProperties(a)
	case p.tok.keyword("WRITE"):
		err = p.writeOrder(a)
	default:
		return nil, p.unexpected("SET TBLPROPERTIES, UNSET TBLPROPERTIES or WRITE after the table (geocompact runs only these ALTER TABLE statements)")
	}
	if err != nil {
		return nil, err
	}
	if p.tok.kind != tokSemi && p.tok.kind != tokEOF {
		return nil, p.unexpected(`";" or the end of the script`)
	}
	return a, nil
}

// alterTable reads the table of ALTER TABLE: delta.`location` or
// 'location' for a Delta table, else a multi-part Iceberg name.
func (p *parser) alterTable(a *Alter) error {
	if p.tok.kind == tokString || p.deltaPath() {
		loc, err := p.deltaTable(CommandAlter)
		a.Location = loc
		return err
	}
	start := p.tok
	for {
		t, err := p.expect(tokIdent, "a table name such as db.sample, or delta.`/path/to/table`")
		if err != nil {
			return err
		}
		if strings.Contains(t.text, ".") {
			return p.errAt(t, "table name part %s: a name holding a dot is not supported", t.describe())
		}
		a.Table = append(a.Table, t.text)
		if p.tok.kind != tokDot {
			break
		}
		if err := p.advance(); err != nil {
			return err
		}
	}
	if len(a.Table) < 2 {
		return p.errAt(start, "table %s: want a namespace and a name, as in ALTER TABLE db.sample", start.describe())
	}
	return nil
}

// deltaPath reports whether the tokens ahead are delta.`…`, a Delta table
// by location; delta.name (unquoted) is an Iceberg table in namespace delta.
func (p *parser) deltaPath() bool {
	if !p.tok.keyword("delta") {
		return false
	}
	save, saveTok := p.lex, p.tok
	defer func() { p.lex, p.tok = save, saveTok }()
	if p.advance() != nil || p.tok.kind != tokDot || p.advance() != nil {
		return false
	}
	return p.tok.quoted
}

// tblProperties reads SET TBLPROPERTIES (…) or UNSET TBLPROPERTIES [IF
// EXISTS] (…).
func (p *parser) tblProperties(a *Alter) error {
	set := p.tok.keyword("SET")
	kw := strings.ToUpper(p.tok.text)
	if err := p.advance(); err != nil {
		return err
	}
	if !p.tok.keyword("TBLPROPERTIES") {
		return p.unexpected(fmt.Sprintf("TBLPROPERTIES after %s (geocompact runs %s TBLPROPERTIES only)", kw, kw))
	}
	if err := p.advance(); err != nil {
		return err
	}
	if !set && p.tok.keyword("IF") {
		if err := p.advance(); err != nil {
			return err
		}
		if !p.tok.keyword("EXISTS") {
			return p.unexpected("EXISTS after IF")
		}
		a.IfExists = true
		if err := p.advance(); err != nil {
			return err
		}
	}
	open, err := p.expect(tokLParen, fmt.Sprintf(`"(" after %s TBLPROPERTIES, as in %s`, kw, propertyExample(set)))
	if err != nil {
		return err
	}
	if p.tok.kind == tokRParen {
		return p.errAt(open, "%s TBLPROPERTIES () is empty: give at least one property, as in %s", kw, propertyExample(set))
	}
	if set {
		a.Set = map[string]string{}
	}
	for {
		if err := p.property(a, set); err != nil {
			return err
		}
		if p.tok.kind != tokComma {
			break
		}
		if err := p.advance(); err != nil {
			return err
		}
	}
	_, err = p.expect(tokRParen, `"," or ")"`)
	return err
}

func propertyExample(set bool) string {
	if set {
		return "('write.target-file-size-bytes' = '128MiB')"
	}
	return "('owner')"
}

// property reads one 'key' [=] value of SET TBLPROPERTIES, or one key of
// UNSET TBLPROPERTIES, into a.
func (p *parser) property(a *Alter, set bool) error {
	start := p.tok
	key, err := p.propertyKey()
	if err != nil {
		return err
	}
	if _, dup := a.Set[key]; dup || !set && slices.Contains(a.Unset, key) {
		return p.errAt(start, "property %q is given twice", key)
	}
	if !set {
		if p.tok.kind != tokComma && p.tok.kind != tokRParen {
			return p.errAt(p.tok, "UNSET TBLPROPERTIES takes keys only: remove the value after %q", key)
		}
		a.Unset = append(a.Unset, key)
		return nil
	}
	if p.tok.kind == tokEq {
		if err := p.advance(); err != nil {
			return err
		}
	}
	if p.tok.kind == tokComma || p.tok.kind == tokRParen || p.tok.kind == tokEOF {
		return p.errAt(start, "property %q has no value: write '%s' = 'value'", key, key)
	}
	v, err := p.propertyValue()
	if err != nil {
		return err
	}
	a.Set[key] = v
	return nil
}

// propertyKey reads a key: a string, or a dotted name (a key holding a
// character such as "-" must be quoted, as in Spark).
func (p *parser) propertyKey() (string, error) {
	if p.tok.kind == tokString {
		v, err := p.strings()
		if err == nil && strings.TrimSpace(v.Text) == "" {
			return "", newError(p.lex.src, v.Pos, "empty property key")
		}
		return v.Text, err
	}
	var parts []string
	for {
		t, err := p.expect(tokIdent, "a property key, as in 'write.target-file-size-bytes'")
		if err != nil {
			return "", err
		}
		parts = append(parts, t.text)
		if p.tok.kind != tokDot {
			return strings.Join(parts, "."), nil
		}
		if err := p.advance(); err != nil {
			return "", err
		}
	}
}

// propertyValue reads a value as Spark's propertyValue takes it: a
// string, a number or a boolean, returned as text.
func (p *parser) propertyValue() (string, error) {
	t := p.tok
	var v Value
	var err error
	switch {
	case t.kind == tokString:
		v, err = p.strings()
	case t.kind == tokNumber:
		v, err = Value{Kind: KindNumber, Pos: t.pos, Text: t.text}, p.advance()
	case t.keyword("TRUE"), t.keyword("FALSE"):
		v, err = Value{Kind: KindBool, Pos: t.pos, Bool: t.keyword("TRUE")}, p.advance()
	default:
		return "", p.unexpected("a property value: 'string', number, TRUE or FALSE")
	}
	if err != nil {
		return "", err
	}
	return scalarText(v)
}

// writeOrder reads WRITE [LOCALLY] ORDERED BY order or WRITE UNORDERED.
// LOCALLY records the same sort order: geocompact keeps no write
// distribution, so DISTRIBUTED BY PARTITION is refused.
func (p *parser) writeOrder(a *Alter) error {
	if err := p.advance(); err != nil {
		return err
	}
	if err := p.refuseDistribution(); err != nil {
		return err
	}
	if p.tok.keyword("UNORDERED") {
		a.Unordered = true
		if err := p.advance(); err != nil {
			return err
		}
		return p.refuseDistribution()
	}
	if p.tok.keyword("LOCALLY") {
		if err := p.advance(); err != nil {
			return err
		}
	}
	if !p.tok.keyword("ORDERED") {
		return p.unexpected("ORDERED BY or UNORDERED after WRITE")
	}
	if err := p.advance(); err != nil {
		return err
	}
	by := p.tok
	if !by.keyword("BY") {
		return p.unexpected("BY after ORDERED")
	}
	if err := p.advance(); err != nil {
		return err
	}
	o, err := p.order()
	if err != nil {
		return err
	}
	a.SortOrder = o.String()
	if _, err := cluster.ParseOrder(a.SortOrder); err != nil {
		return p.errAt(by, "WRITE ORDERED BY %s: %s", a.SortOrder, err)
	}
	return p.refuseDistribution()
}

func (p *parser) refuseDistribution() error {
	if !p.tok.keyword("DISTRIBUTED") {
		return nil
	}
	return p.errAt(p.tok, "WRITE DISTRIBUTED BY is not supported: geocompact records a sort order, not how writers distribute rows; "+
		"set write.distribution-mode with SET TBLPROPERTIES if your writers need it")
}

// order reads WRITE ORDERED BY's fields, with or without parentheses: a
// curve, zorder(a, b), hilbert(a, b) or str(geometry), or columns with
// an optional direction and null order.
func (p *parser) order() (cluster.Order, error) {
	paren := p.tok.kind == tokLParen
	if paren {
		if err := p.advance(); err != nil {
			return cluster.Order{}, err
		}
	}
	o := cluster.Order{Curve: cluster.CurveLinear}
	for {
		start := p.tok
		col, err := p.columnName("WRITE ORDERED")
		if err != nil {
			return o, err
		}
		if p.tok.kind == tokLParen {
			if len(o.Fields) > 0 {
				return o, p.errAt(start, "%s(…) after other fields: a curve is the whole order", col)
			}
			return p.curveOrder(start, col, paren)
		}
		if slices.ContainsFunc(o.Fields, func(f cluster.Field) bool { return f.Column == col }) {
			return o, p.errAt(start, "WRITE ORDERED BY: column %s is given twice", col)
		}
		f, err := p.fieldOrder(col)
		if err != nil {
			return o, err
		}
		o.Fields = append(o.Fields, f)
		if p.tok.kind != tokComma {
			break
		}
		if err := p.advance(); err != nil {
			return o, err
		}
	}
	if paren {
		if _, err := p.expect(tokRParen, `"," or ")"`); err != nil {
			return o, err
		}
	}
	return o, nil
}

// fieldOrder reads a column's [ASC|DESC] [NULLS FIRST|LAST], with
// Iceberg's defaults: NULLS FIRST for ASC, NULLS LAST for DESC.
func (p *parser) fieldOrder(col string) (cluster.Field, error) {
	f := cluster.Field{Column: col, Direction: cluster.Asc, Nulls: cluster.NullsFirst}
	if p.tok.keyword("ASC") || p.tok.keyword("DESC") {
		if p.tok.keyword("DESC") {
			f.Direction, f.Nulls = cluster.Desc, cluster.NullsLast
		}
		if err := p.advance(); err != nil {
			return f, err
		}
	}
	if !p.tok.keyword("NULLS") {
		return f, nil
	}
	if err := p.advance(); err != nil {
		return f, err
	}
	switch {
	case p.tok.keyword("FIRST"):
		f.Nulls = cluster.NullsFirst
	case p.tok.keyword("LAST"):
		f.Nulls = cluster.NullsLast
	default:
		return f, p.unexpected("FIRST or LAST after NULLS")
	}
	return f, p.advance()
}

// curveOrder reads the columns of the curve name( … ) at start; a curve
// is the whole order. Iceberg's transforms (bucket, truncate, days, …)
// are refused: a rewrite cannot evaluate them.
func (p *parser) curveOrder(start token, name string, paren bool) (cluster.Order, error) {
	c, err := cluster.LookupCurve(name)
	if err != nil || !c.Function {
		return cluster.Order{}, p.errAt(start, "WRITE ORDERED BY %s(…) is not supported: geocompact orders by columns, "+
			"%s; Iceberg's transforms (bucket, truncate, years, days, …) cannot be evaluated by a rewrite", name, curveForms())
	}
	o := cluster.Order{Curve: c.Curve}
	if err := p.advance(); err != nil { // (
		return o, err
	}
	for p.tok.kind != tokRParen {
		if len(o.Columns) > 0 {
			if _, err := p.expect(tokComma, `"," or ")"`); err != nil {
				return o, err
			}
		}
		at := p.tok
		col, err := p.columnName("WRITE ORDERED")
		if err != nil {
			return o, err
		}
		if slices.Contains(o.Columns, col) {
			return o, p.errAt(at, "%s(…): column %s is given twice", name, col)
		}
		if limit := c.MaxColumns; len(o.Columns) == limit {
			return o, p.errAt(at, "%s(…) takes at most %d columns", name, limit)
		}
		o.Columns = append(o.Columns, col)
	}
	if err := p.advance(); err != nil { // )
		return o, err
	}
	if paren {
		if _, err := p.expect(tokRParen, `")": a curve is the whole order`); err != nil {
			return o, err
		}
	}
	if p.tok.kind == tokComma {
		return o, p.errAt(p.tok, "unexpected \",\" after %s(…): a curve is the whole order", name)
	}
	if p.tok.keyword("ASC") || p.tok.keyword("DESC") || p.tok.keyword("NULLS") {
		return o, p.errAt(p.tok, "unexpected %s after %s(…): a curve has no direction or null order", p.tok.describe(), name)
	}
	return o, nil
}

// curveForms lists the curves WRITE ORDERED BY takes, as cluster's
// registry has them: "zorder(a, b), hilbert(a, b), str(geometry) or
// kd(geometry)".
func curveForms() string {
	var forms []string
	for _, c := range cluster.Curves() {
		switch {
		case !c.Function:
		case c.MaxColumns == 1:
			forms = append(forms, c.Name+"(geometry)")
		default:
			forms = append(forms, c.Name+"(a, b)")
		}
	}
	return strings.Join(forms[:len(forms)-1], ", ") + " or " + forms[len(forms)-1]
}
