package where

import (
	"fmt"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
)

type parser struct {
	toks  []token
	i     int
	sc    *iceberg.Schema
	depth int
	now   time.Time // what now() and current_date mean, in UTC
}

func (p *parser) peek() token { return p.toks[p.i] }

func (p *parser) peekAt(n int) token { return p.toks[min(p.i+n, len(p.toks)-1)] }

func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tokEOF {
		p.i++
	}
	return t
}

func (p *parser) unexpected(t token, want string) error {
	return &Error{Pos: t.pos, Token: t.raw, Reason: fmt.Sprintf("unexpected %s, want %s", t.describe(), want)}
}

func errAt(t token, format string, args ...any) error {
	return &Error{Pos: t.pos, Token: t.raw, Reason: fmt.Sprintf(format, args...)}
}

// expect consumes a token of kind k or fails naming want.
func (p *parser) expect(k tokKind, want string) (token, error) {
	if t := p.peek(); t.kind != k {
		return t, p.unexpected(t, want)
	}
	return p.next(), nil
}

// enter counts one level of nesting; the caller defers p.depth--.
func (p *parser) enter(t token) error {
	p.depth++
	if p.depth > maxDepth {
		return errAt(t, "nested deeper than %d levels", maxDepth)
	}
	return nil
}

func (p *parser) parseOr() (iceberg.BooleanExpression, error) {
	left, err := p.parseAnd()
	for err == nil && p.peek().keyword("OR") {
		p.next()
		var right iceberg.BooleanExpression
		if right, err = p.parseAnd(); err == nil {
			left = iceberg.NewOr(left, right)
		}
	}
	return left, err
}

func (p *parser) parseAnd() (iceberg.BooleanExpression, error) {
	left, err := p.parseUnary()
	for err == nil && p.peek().keyword("AND") {
		p.next()
		var right iceberg.BooleanExpression
		if right, err = p.parseUnary(); err == nil {
			left = iceberg.NewAnd(left, right)
		}
	}
	return left, err
}

func (p *parser) parseUnary() (iceberg.BooleanExpression, error) {
	t := p.peek()
	if !t.keyword("NOT") {
		return p.parsePrimary()
	}
	p.next()
	defer func() { p.depth-- }()
	if err := p.enter(t); err != nil {
		return nil, err
	}
	child, err := p.parseUnary()
	if err != nil {
		return nil, err
	}
	return iceberg.NewNot(child), nil
}

func (p *parser) parsePrimary() (iceberg.BooleanExpression, error) {
	t := p.peek()
	switch {
	case t.kind == tokLParen:
		return p.parseParen()
	case t.keyword("bbox") && p.peekAt(1).kind == tokLParen:
		return p.parseBBox()
	}
	left, err := p.parseOperand()
	if err != nil {
		return nil, err
	}
	if left.lit != nil {
		if p.peek().kind == tokOp {
			return p.parseComparison(left)
		}
		if left.lit.kind == litBool {
			if left.lit.b {
				return iceberg.AlwaysTrue{}, nil
			}
			return iceberg.AlwaysFalse{}, nil
		}
		return nil, p.unexpected(p.peek(), fmt.Sprintf("a comparison operator after %s", left.tok.raw))
	}
	return p.parseColumnPredicate(left.col)
}

func (p *parser) parseParen() (iceberg.BooleanExpression, error) {
	open := p.next()
	defer func() { p.depth-- }()
	if err := p.enter(open); err != nil {
		return nil, err
	}
	e, err := p.parseOr()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tokRParen {
		return nil, p.unexpected(t, fmt.Sprintf(`AND, OR or ")" to close the "(" at %d`, open.pos))
	}
	p.next()
	return e, nil
}

// parseColumnPredicate parses what follows a column: a comparison, [NOT]
// IN, [NOT] BETWEEN, IS [NOT] NULL, or nothing for a boolean column.
func (p *parser) parseColumnPredicate(c *column) (iceberg.BooleanExpression, error) {
	t := p.peek()
	negate := t.keyword("NOT") && (p.peekAt(1).keyword("IN") || p.peekAt(1).keyword("BETWEEN"))
	if negate {
		p.next()
		t = p.peek()
	}
	switch {
	case t.kind == tokOp:
		return p.parseComparison(&operand{tok: c.tok, col: c})
	case t.keyword("IN"):
		return p.parseIn(c, negate)
	case t.keyword("BETWEEN"):
		return p.parseBetween(c, negate)
	case t.keyword("IS"):
		return p.parseIsNull(c)
	}
	if _, ok := c.field.Type.(iceberg.BooleanType); ok && endsPredicate(t) {
		return iceberg.EqualTo(c.ref(), true), nil
	}
	return nil, p.unexpected(t, fmt.Sprintf("a comparison, IN, BETWEEN or IS after column %q", c.name))
}

// endsPredicate reports whether t may follow a complete predicate.
func endsPredicate(t token) bool {
	return t.kind == tokEOF || t.kind == tokRParen || t.keyword("AND") || t.keyword("OR")
}

var whereOps = map[string]iceberg.Operation{
	"=": iceberg.OpEQ, "!=": iceberg.OpNEQ, "<>": iceberg.OpNEQ,
	"<": iceberg.OpLT, "<=": iceberg.OpLTEQ, ">": iceberg.OpGT, ">=": iceberg.OpGTEQ,
}

// flipOp is the operator that keeps the meaning when the operands swap.
func flipOp(op iceberg.Operation) iceberg.Operation {
	switch op {
	case iceberg.OpEQ, iceberg.OpNEQ:
		return op
	}
	return op.FlipLR()
}

// parseComparison parses "op operand" after left; one side must be a
// column and the other a literal.
func (p *parser) parseComparison(left *operand) (iceberg.BooleanExpression, error) {
	opTok := p.next()
	op, ok := whereOps[opTok.text]
	if !ok {
		return nil, errAt(opTok, "unknown operator %q", opTok.raw)
	}
	right, err := p.parseOperand()
	if err != nil {
		return nil, err
	}
	switch {
	case left.col != nil && right.col != nil:
		return nil, errAt(right.tok, "cannot compare column %q with column %q; compare a column with a literal",
			left.col.name, right.col.name)
	case left.lit != nil && right.lit != nil:
		return nil, errAt(left.tok, "%s %s %s compares two literals; one side must be a column",
			left.tok.raw, opTok.raw, right.lit.raw)
	case left.lit != nil:
		left, right, op = right, left, flipOp(op)
	}
	if right.lit.kind == litNull {
		return nil, errAt(right.tok, "comparison with NULL is never true; use %s IS [NOT] NULL", left.col.name)
	}
	lit, err := p.convert(left.col, right.lit)
	if err != nil {
		return nil, err
	}
	return iceberg.LiteralPredicate(op, left.col.ref(), lit), nil
}

func (p *parser) parseIn(c *column, negate bool) (iceberg.BooleanExpression, error) {
	p.next() // IN
	if _, err := p.expect(tokLParen, `"(" after IN`); err != nil {
		return nil, err
	}
	var lits []iceberg.Literal
	for {
		l, err := p.parseLiteral()
		if err != nil {
			return nil, err
		}
		if l.kind == litNull {
			return nil, errAt(l.tok, "NULL in an IN list never matches; use %s IS [NOT] NULL", c.name)
		}
		v, err := p.convert(c, l)
		if err != nil {
			return nil, err
		}
		lits = append(lits, v)
		if t := p.next(); t.kind == tokRParen {
			break
		} else if t.kind != tokComma {
			return nil, p.unexpected(t, `"," or ")" in the IN list`)
		}
	}
	op := iceberg.OpIn
	if negate {
		op = iceberg.OpNotIn
	}
	return iceberg.SetPredicate(op, c.ref(), lits), nil
}

func (p *parser) parseBetween(c *column, negate bool) (iceberg.BooleanExpression, error) {
	p.next() // BETWEEN
	var bounds [2]iceberg.Literal
	for i := range bounds {
		if i == 1 {
			if t := p.next(); !t.keyword("AND") {
				return nil, p.unexpected(t, "AND in BETWEEN ... AND ...")
			}
		}
		l, err := p.parseLiteral()
		if err != nil {
			return nil, err
		}
		if l.kind == litNull {
			return nil, errAt(l.tok, "NULL as a BETWEEN bound never matches")
		}
		if bounds[i], err = p.convert(c, l); err != nil {
			return nil, err
		}
	}
	if negate {
		return iceberg.NewOr(iceberg.LiteralPredicate(iceberg.OpLT, c.ref(), bounds[0]),
			iceberg.LiteralPredicate(iceberg.OpGT, c.ref(), bounds[1])), nil
	}
	return iceberg.NewAnd(iceberg.LiteralPredicate(iceberg.OpGTEQ, c.ref(), bounds[0]),
		iceberg.LiteralPredicate(iceberg.OpLTEQ, c.ref(), bounds[1])), nil
}

func (p *parser) parseIsNull(c *column) (iceberg.BooleanExpression, error) {
	p.next() // IS
	not := p.peek().keyword("NOT")
	if not {
		p.next()
	}
	if t := p.next(); !t.keyword("NULL") {
		return nil, p.unexpected(t, "NULL or NOT NULL after IS")
	}
	if not {
		return iceberg.NotNull(c.ref()), nil
	}
	return iceberg.IsNull(c.ref()), nil
}

// column is a resolved schema field.
type column struct {
	tok   token
	field iceberg.NestedField
	name  string // full dotted name
}

func (c *column) ref() iceberg.Reference { return iceberg.Reference(c.name) }

// operand is a column or a literal.
type operand struct {
	tok token
	col *column
	lit *literal
}

func (p *parser) parseOperand() (*operand, error) {
	t := p.peek()
	switch {
	case t.kind == tokString:
		p.next()
		return &operand{tok: t, lit: &literal{kind: litString, tok: t, raw: t.raw, text: t.text}}, nil
	case t.kind == tokNumber:
		p.next()
		return &operand{tok: t, lit: &literal{kind: litNumber, tok: t, raw: t.raw, text: t.text}}, nil
	case t.keyword("TRUE"), t.keyword("FALSE"):
		p.next()
		return &operand{tok: t, lit: &literal{kind: litBool, tok: t, raw: t.raw, b: t.keyword("TRUE")}}, nil
	case t.keyword("NULL"):
		p.next()
		return &operand{tok: t, lit: &literal{kind: litNull, tok: t, raw: t.raw}}, nil
	case (t.keyword("DATE") || t.keyword("TIMESTAMP")) && p.peekAt(1).kind == tokString:
		return p.parseTypedLiteral()
	case t.keyword("now") && p.peekAt(1).kind == tokLParen && p.peekAt(2).kind == tokRParen,
		t.keyword("current_date"), t.keyword("current_timestamp"):
		return p.parseRelativeTime()
	case t.kind == tokQuotedIdent, t.kind == tokIdent && !t.isReserved():
		p.next()
		c, err := p.resolve(t)
		if err != nil {
			return nil, err
		}
		return &operand{tok: t, col: c}, nil
	}
	return nil, p.unexpected(t, "a column or a literal")
}

// parseLiteral parses an operand that must be a literal.
func (p *parser) parseLiteral() (*literal, error) {
	t := p.peek()
	o, err := p.parseOperand()
	if err != nil {
		return nil, err
	}
	if o.lit == nil {
		return nil, p.unexpected(t, "a literal")
	}
	return o.lit, nil
}

// resolve looks up a column: a bare name exactly, then ignoring case; a
// quoted one exactly.
func (p *parser) resolve(t token) (*column, error) {
	f, ok := p.sc.FindFieldByName(t.text)
	if !ok && t.kind == tokIdent {
		f, ok = p.sc.FindFieldByNameCaseInsensitive(t.text)
	}
	if !ok {
		return nil, p.unknownColumn(t)
	}
	name, ok := p.sc.FindColumnName(f.ID)
	if !ok {
		name = f.Name
	}
	return &column{tok: t, field: f, name: name}, nil
}

func (p *parser) unknownColumn(t token) error {
	hint := ""
	if f, ok := p.sc.FindFieldByNameCaseInsensitive(t.text); ok {
		hint = fmt.Sprintf("; did you mean %q?", f.Name)
	}
	return errAt(t, "unknown column %q (columns: %s)%s", t.text, columnList(p.sc), hint)
}

// columnList names the first few top-level columns of sc.
func columnList(sc *iceberg.Schema) string {
	const show = 8
	fields := sc.Fields()
	names := make([]string, 0, show+1)
	for i, f := range fields {
		if i == show {
			names = append(names, fmt.Sprintf("and %d more", len(fields)-show))
			break
		}
		names = append(names, f.Name)
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
