// Package where parses the --where language: a small SQL-like predicate
// that scopes a rewrite to the files that may hold matching rows. It is a
// leaf: it knows iceberg-go's expressions and the spatial bbox columns,
// nothing of the rewrite.
package where

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/apache/iceberg-go"

	"github.com/geocompact/geocompact/spatial"
)

// ErrInvalid is the category of every error Parse returns.
var ErrInvalid = errors.New("where: invalid predicate")

// Error reports where a --where predicate went wrong. It unwraps to
// ErrInvalid and, when the schema rejected a literal, to iceberg-go's error.
type Error struct {
	// Pos is the 0-based byte offset of the offending token in the input.
	Pos int
	// Token is the offending token as written, "" at the end of the input.
	Token string
	// Reason says what is wrong, naming the token.
	Reason string

	err error
}

// Error implements error: "where: invalid predicate: at 14: unexpected ...".
func (e *Error) Error() string {
	return fmt.Sprintf("%v: at %d: %s", ErrInvalid, e.Pos, e.Reason)
}

// Unwrap returns ErrInvalid and the underlying cause, if any.
func (e *Error) Unwrap() []error {
	if e.err != nil {
		return []error{ErrInvalid, e.err}
	}
	return []error{ErrInvalid}
}

// maxDepth bounds the nesting of parentheses and NOTs, so a hostile
// input cannot exhaust the stack.
const maxDepth = 200

// Parse turns a small SQL-like predicate into an unbound iceberg-go
// expression over sc, for scoping a rewrite to the files that may hold
// matching rows.
//
// The language:
//
//	expr    := or
//	or      := and { OR and }
//	and     := unary { AND unary }
//	unary   := NOT unary | primary
//	primary := "(" expr ")"
//	         | bbox "(" [col ","] num "," num "," num "," num ")"
//	         | operand cmp operand            -- one side a column, one a literal
//	         | col [NOT] IN "(" lit { "," lit } ")"
//	         | col [NOT] BETWEEN lit AND lit
//	         | col IS [NOT] NULL
//	         | col                            -- a boolean column: col = TRUE
//	         | TRUE | FALSE
//	cmp     := "=" | "!=" | "<>" | "<" | "<=" | ">" | ">="
//	lit     := 'string' | number | TRUE | FALSE | DATE 'yyyy-mm-dd'
//	         | TIMESTAMP 'yyyy-mm-dd[ hh:mm[:ss[.ffffff]]][offset]'
//	         | now { ("+" | "-") INTERVAL 'n unit' }
//	now     := now() | current_timestamp | current_date
//	unit    := second | minute | hour | day | week | month | year (or plural)
//
//	name = 'O''Brien' AND ts >= '2026-01-02' AND bbox(0, 0, 10, 10)
//
// Keywords are case-insensitive. A bare column name matches exactly, then
// case-insensitively; a double-quoted one ("My Col", "" escapes a quote)
// matches exactly. Strings are single-quoted, a doubled quote standing for
// one, as in the example above.
//
// Literals take the type of the column they are compared with, and one that
// does not fit (3.5 for an int, 'abc' for a long, an int out of range) is an
// error. Timestamps are UTC unless the literal carries an offset (Z, +02:00,
// -0500): Iceberg's day partitions are UTC days, so ts >= '2026-01-02' AND
// ts < '2026-01-03' is exactly the UTC day. The local time zone is never
// used. Date columns take 'yyyy-mm-dd' only.
//
// Relative times, so a scheduled job need not compute dates: now() and
// current_timestamp are the time of the run, current_date its UTC
// midnight, each evaluated once per Parse in UTC and truncated to the
// column's precision (microseconds, nanoseconds for timestamp_ns, so
// the clock's nanoseconds never make them misfit); INTERVAL '7 days' or
// '2 hours' moves them, as in ts >= now() - interval '1 day'. current_date
// moved by whole days, weeks, months or years stays a date.
//
// bbox(minx, miny, maxx, maxy) keeps files whose bounding box may intersect
// the closed window, so touching boxes intersect. A window with minx > maxx
// crosses the antimeridian, as GeoParquet and STAC define it:
// bbox(170, 50, -170, 60) is the union of x >= 170 and x <= -170 for
// y in [50, 60], and matches files in either half. On a schema with the four
// spatial.BBoxColumns it compares their per-file statistics; otherwise it
// is iceberg.BBoxIntersects on the schema's geometry column, which must be
// named as a fifth, leading argument when there are several.
//
// Empty or blank input is iceberg.AlwaysTrue{}. The result is bound against
// sc before it is returned, so every type error surfaces here. Errors are
// *Error and match ErrInvalid.
func Parse(s string, sc *iceberg.Schema) (iceberg.BooleanExpression, error) {
	return ParseAt(s, sc, time.Now())
}

// ParseAt is Parse with now() and current_date taken from now (in UTC)
// rather than the clock, so a run evaluates them once and a test can fix
// them.
func ParseAt(s string, sc *iceberg.Schema, now time.Time) (iceberg.BooleanExpression, error) {
	if strings.TrimSpace(s) == "" {
		return iceberg.AlwaysTrue{}, nil
	}
	if sc == nil {
		return nil, &Error{Reason: "no table schema to resolve columns against"}
	}
	toks, err := lex(s)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks, sc: sc, now: now.UTC()}
	expr, err := p.parseOr()
	if err != nil {
		return nil, err
	}
	switch t := p.peek(); t.kind {
	case tokEOF:
	case tokRParen:
		return nil, errAt(t, `unbalanced ")": no "(" to close`)
	default:
		return nil, p.unexpected(t, "AND, OR or end of input")
	}
	if _, err := iceberg.BindExpr(sc, expr, true); err != nil {
		return nil, &Error{Reason: "does not bind to the table schema: " + err.Error(), err: err}
	}
	return expr, nil
}

type tokKind int

const (
	tokEOF tokKind = iota
	tokIdent
	tokQuotedIdent
	tokString
	tokNumber
	tokOp
	tokLParen
	tokRParen
	tokComma
)

// token is one lexeme. text is the value: unescaped for strings and quoted
// identifiers, as written otherwise; raw is the source text for messages.
type token struct {
	kind tokKind
	pos  int
	text string
	raw  string
}

// keyword reports whether t is the bare word kw, case-insensitively.
func (t token) keyword(kw string) bool {
	return t.kind == tokIdent && strings.EqualFold(t.text, kw)
}

// reserved are the bare words that cannot name a column; quote them.
var reserved = []string{"AND", "OR", "NOT", "IN", "IS", "NULL", "BETWEEN", "TRUE", "FALSE"}

func (t token) isReserved() bool {
	for _, kw := range reserved {
		if t.keyword(kw) {
			return true
		}
	}
	return false
}

func (t token) describe() string {
	if t.kind == tokEOF {
		return "end of input"
	}
	return fmt.Sprintf("%q", t.raw)
}

func lex(s string) ([]token, error) {
	var toks []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
			continue
		case c == '(' || c == ')' || c == ',':
			k := tokComma
			if c == '(' {
				k = tokLParen
			} else if c == ')' {
				k = tokRParen
			}
			toks = append(toks, token{kind: k, pos: i, text: s[i : i+1], raw: s[i : i+1]})
			i++
			continue
		case c == '\'' || c == '"':
			t, err := lexQuoted(s, i)
			if err != nil {
				return nil, err
			}
			toks = append(toks, t)
			i += len(t.raw)
			continue
		case c == '=' || c == '<' || c == '>' || c == '!':
			n := 1
			if i+1 < len(s) && (s[i+1] == '=' || (c == '<' && s[i+1] == '>')) {
				n = 2
			}
			if c == '!' && n == 1 {
				return nil, &Error{Pos: i, Token: "!", Reason: `unexpected "!", want "!="`}
			}
			toks = append(toks, token{kind: tokOp, pos: i, text: s[i : i+n], raw: s[i : i+n]})
			i += n
			continue
		case isDigit(c) || ((c == '-' || c == '+' || c == '.') && startsNumber(s[i:])):
			t, err := lexNumber(s, i)
			if err != nil {
				return nil, err
			}
			toks = append(toks, t)
			i += len(t.raw)
			continue
		case c == '+' || c == '-':
			toks = append(toks, token{kind: tokOp, pos: i, text: s[i : i+1], raw: s[i : i+1]})
			i++
			continue
		case isIdentStart(c):
			j := i + 1
			for j < len(s) && isIdentPart(s[j]) {
				j++
			}
			toks = append(toks, token{kind: tokIdent, pos: i, text: s[i:j], raw: s[i:j]})
			i = j
			continue
		}
		r, _ := utf8.DecodeRuneInString(s[i:])
		return nil, &Error{Pos: i, Token: string(r), Reason: fmt.Sprintf("unexpected character %q", r)}
	}
	return append(toks, token{kind: tokEOF, pos: len(s)}), nil
}

// lexQuoted reads a '…' string or a "…" identifier starting at s[i]; a
// doubled quote inside stands for one.
func lexQuoted(s string, i int) (token, error) {
	q := s[i]
	var b strings.Builder
	for j := i + 1; j < len(s); j++ {
		if s[j] != q {
			b.WriteByte(s[j])
			continue
		}
		if j+1 < len(s) && s[j+1] == q {
			b.WriteByte(q)
			j++
			continue
		}
		t := token{kind: tokString, pos: i, text: b.String(), raw: s[i : j+1]}
		if q == '"' {
			t.kind = tokQuotedIdent
			if t.text == "" {
				return token{}, &Error{Pos: i, Token: t.raw, Reason: "empty quoted column name"}
			}
		}
		return t, nil
	}
	what := "string"
	if q == '"' {
		what = "quoted column name"
	}
	return token{}, &Error{Pos: i, Token: s[i:], Reason: fmt.Sprintf("unterminated %s starting %q", what, clip(s[i:]))}
}

// startsNumber reports whether s, which starts with a sign or a dot, starts
// a number: a sign must be followed by a digit or ".digit".
func startsNumber(s string) bool {
	if s[0] == '-' || s[0] == '+' {
		s = s[1:]
	}
	if s != "" && s[0] == '.' {
		s = s[1:]
	}
	return s != "" && isDigit(s[0])
}

// lexNumber reads [+-] digits [. digits] [e [+-] digits] starting at s[i].
func lexNumber(s string, i int) (token, error) {
	j := i
	if s[j] == '-' || s[j] == '+' {
		j++
	}
	digits := func() {
		for j < len(s) && isDigit(s[j]) {
			j++
		}
	}
	digits()
	if j < len(s) && s[j] == '.' {
		j++
		digits()
	}
	if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
		k := j + 1
		if k < len(s) && (s[k] == '-' || s[k] == '+') {
			k++
		}
		if k < len(s) && isDigit(s[k]) {
			j = k
			digits()
		}
	}
	if j < len(s) && (isIdentPart(s[j]) || s[j] == '.') {
		k := j
		for k < len(s) && (isIdentPart(s[k]) || s[k] == '.') {
			k++
		}
		return token{}, &Error{Pos: i, Token: s[i:k], Reason: fmt.Sprintf("malformed number %q", s[i:k])}
	}
	return token{kind: tokNumber, pos: i, text: s[i:j], raw: s[i:j]}, nil
}

func isDigit(c byte) bool      { return c >= '0' && c <= '9' }
func isIdentStart(c byte) bool { return c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z') }
func isIdentPart(c byte) bool  { return isIdentStart(c) || isDigit(c) || c == '.' || c == '$' }

// clip shortens s for an error message.
func clip(s string) string {
	if r := []rune(s); len(r) > 24 {
		return string(r[:24]) + "…"
	}
	return s
}

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

type litKind int

const (
	litString litKind = iota
	litNumber
	litBool
	litNull
	litDate      // DATE '…', parsed into t
	litTimestamp // TIMESTAMP '…', parsed into t
)

// literal is a value not yet typed: the column it meets decides its type.
type literal struct {
	kind litKind
	tok  token     // the value token, for positions
	raw  string    // as written, for messages
	text string    // unescaped string or number text
	b    bool      // litBool
	t    time.Time // litDate, litTimestamp
	// relative marks a time from now() or current_timestamp: the clock
	// reads nanoseconds, which a column of coarser precision truncates.
	relative bool
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

// parseTypedLiteral parses DATE '…' or TIMESTAMP '…'.
func (p *parser) parseTypedLiteral() (*operand, error) {
	kw, s := p.next(), p.next()
	l := &literal{tok: s, raw: kw.raw + " " + s.raw, text: s.text}
	var err error
	if kw.keyword("DATE") {
		l.kind = litDate
		l.t, err = parseDate(s.text)
	} else {
		l.kind = litTimestamp
		l.t, err = parseTimestamp(s.text)
	}
	if err != nil {
		return nil, errAt(s, "bad %s literal %s: %v", strings.ToUpper(kw.text), s.raw, err)
	}
	return &operand{tok: kw, lit: l}, nil
}

// parseRelativeTime parses now(), current_timestamp or current_date, then
// any number of ("+" | "-") INTERVAL 'n unit'.
func (p *parser) parseRelativeTime() (*operand, error) {
	start := p.next()
	l := &literal{kind: litTimestamp, tok: start, raw: start.raw, t: p.now, relative: true}
	switch {
	case start.keyword("now"):
		p.next() // (
		p.next() // )
		l.raw += "()"
	case start.keyword("current_date"):
		l.kind, l.t = litDate, time.Date(p.now.Year(), p.now.Month(), p.now.Day(), 0, 0, 0, 0, time.UTC)
	}
	for {
		op := p.peek()
		if op.kind != tokOp || (op.text != "+" && op.text != "-") {
			break
		}
		if !p.peekAt(1).keyword("INTERVAL") || p.peekAt(2).kind != tokString {
			return nil, p.unexpected(p.peekAt(1), fmt.Sprintf("INTERVAL 'n unit' after %s %s", l.raw, op.raw))
		}
		p.next()
		p.next()
		s := p.next()
		t, whole, err := addInterval(l.t, s.text, op.text == "-")
		if err != nil {
			return nil, errAt(s, "bad interval %s: %v", s.raw, err)
		}
		if !whole {
			l.kind = litTimestamp
		}
		l.t = t
		l.raw += " " + op.raw + " INTERVAL " + s.raw
	}
	return &operand{tok: start, lit: l}, nil
}

// intervalUnits are the units INTERVAL takes, singular.
var intervalUnits = []string{"second", "minute", "hour", "day", "week", "month", "year"}

// addInterval adds (or with minus subtracts) "n unit" to t; whole reports
// whether the interval is whole days, which keeps a date a date.
func addInterval(t time.Time, s string, minus bool) (time.Time, bool, error) {
	fields := strings.Fields(strings.ToLower(s))
	if len(fields) != 2 {
		return t, false, fmt.Errorf("want 'n unit' with unit one of %s, e.g. '7 days'", strings.Join(intervalUnits, ", "))
	}
	n, err := strconv.Atoi(fields[0])
	if err != nil || n < 0 || n > 1_000_000 {
		return t, false, fmt.Errorf("want a whole number of %s, at most 1000000", fields[1])
	}
	if minus {
		n = -n
	}
	switch strings.TrimSuffix(fields[1], "s") {
	case "second":
		return t.Add(time.Duration(n) * time.Second), false, nil
	case "minute":
		return t.Add(time.Duration(n) * time.Minute), false, nil
	case "hour":
		return t.Add(time.Duration(n) * time.Hour), false, nil
	case "day":
		return t.AddDate(0, 0, n), true, nil
	case "week":
		return t.AddDate(0, 0, 7*n), true, nil
	case "month":
		return t.AddDate(0, n, 0), true, nil
	case "year":
		return t.AddDate(n, 0, 0), true, nil
	}
	return t, false, fmt.Errorf("unknown unit %q: want one of %s", fields[1], strings.Join(intervalUnits, ", "))
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

// convert types l by column c, failing when the value does not fit.
func (p *parser) convert(c *column, l *literal) (iceberg.Literal, error) {
	misfit := func(want string) error {
		return errAt(l.tok, "%s does not fit column %q of type %s: want %s", l.raw, c.name, c.field.Type, want)
	}
	switch typ := c.field.Type.(type) {
	case iceberg.BooleanType:
		if l.kind != litBool {
			return nil, misfit("TRUE or FALSE")
		}
		return iceberg.NewLiteral(l.b), nil
	case iceberg.Int32Type, iceberg.Int64Type:
		bits := 64
		if _, ok := typ.(iceberg.Int32Type); ok {
			bits = 32
		}
		n, why := intValue(l, bits)
		if why != "" {
			return nil, misfit(why)
		}
		if bits == 32 {
			return iceberg.NewLiteral(int32(n)), nil
		}
		return iceberg.NewLiteral(n), nil
	case iceberg.Float32Type, iceberg.Float64Type:
		bits := 64
		if _, ok := typ.(iceberg.Float32Type); ok {
			bits = 32
		}
		f, why := floatValue(l, bits)
		if why != "" {
			return nil, misfit(why)
		}
		if bits == 32 {
			return iceberg.NewLiteral(float32(f)), nil
		}
		return iceberg.NewLiteral(f), nil
	case iceberg.StringType:
		if l.kind != litString {
			return nil, misfit("a quoted string")
		}
		return iceberg.NewLiteral(l.text), nil
	case iceberg.DateType:
		return dateLiteral(l, misfit)
	case iceberg.TimestampType, iceberg.TimestampTzType, iceberg.TimestampNsType, iceberg.TimestampTzNsType:
		return timestampLiteral(l, typ, misfit)
	case iceberg.DecimalType, iceberg.UUIDType, iceberg.TimeType:
		if l.kind != litString && l.kind != litNumber {
			return nil, misfit("a string or a number")
		}
		v, err := iceberg.StringLiteral(l.text).To(typ)
		if err != nil {
			return nil, misfit(err.Error())
		}
		return v, nil
	case iceberg.GeometryType:
		return nil, errAt(c.tok, "column %q is %s and takes no comparisons; use bbox(minx, miny, maxx, maxy)", c.name, typ)
	}
	return nil, errAt(c.tok, "column %q has type %s, which --where cannot compare", c.name, c.field.Type)
}

// numberText reports whether s is a whole number in the lexer's syntax.
func numberText(s string) bool {
	if s == "" || (!isDigit(s[0]) && !startsNumber(s)) {
		return false
	}
	t, err := lexNumber(s, 0)
	return err == nil && t.raw == s
}

// intValue reads l as a bits-wide integer; an integral float (3.0, 1e3)
// counts. A non-empty why says what was wanted instead.
func intValue(l *literal, bits int) (n int64, why string) {
	want := fmt.Sprintf("an integer (int%d)", bits)
	if (l.kind != litNumber && l.kind != litString) || !numberText(l.text) {
		return 0, want
	}
	if !strings.ContainsAny(l.text, ".eE") {
		n, err := strconv.ParseInt(l.text, 10, bits)
		if err != nil {
			return 0, want + " in range"
		}
		return n, ""
	}
	f, err := strconv.ParseFloat(l.text, 64)
	lim := math.Ldexp(1, bits-1)
	switch {
	case err != nil || f != math.Trunc(f):
		return 0, want
	case f < -lim || f >= lim:
		return 0, want + " in range"
	}
	return int64(f), ""
}

// floatValue reads l as a finite bits-wide float.
func floatValue(l *literal, bits int) (f float64, why string) {
	want := fmt.Sprintf("a number (float%d)", bits)
	if (l.kind != litNumber && l.kind != litString) || !numberText(l.text) {
		return 0, want
	}
	f, err := strconv.ParseFloat(l.text, bits)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, want + " in range"
	}
	return f, ""
}

func dateLiteral(l *literal, misfit func(string) error) (iceberg.Literal, error) {
	const want = "a date 'yyyy-mm-dd'"
	t := l.t
	switch l.kind {
	case litDate:
	case litString:
		var err error
		if t, err = parseDate(l.text); err != nil {
			return nil, misfit(want)
		}
	default:
		return nil, misfit(want)
	}
	return iceberg.NewLiteral(iceberg.Date(t.Unix() / 86400)), nil
}

// Nanosecond timestamps hold about 1678-2262.
var (
	minNanoTime = time.Unix(0, math.MinInt64)
	maxNanoTime = time.Unix(0, math.MaxInt64)
)

func timestampLiteral(l *literal, typ iceberg.Type, misfit func(string) error) (iceberg.Literal, error) {
	const want = "a timestamp 'yyyy-mm-dd[ hh:mm[:ss[.ffffff]]][offset]'"
	t := l.t
	switch l.kind {
	case litDate, litTimestamp:
	case litString:
		var err error
		if t, err = parseTimestamp(l.text); err != nil {
			return nil, misfit(want)
		}
	default:
		return nil, misfit(want)
	}
	switch typ.(type) {
	case iceberg.TimestampNsType, iceberg.TimestampTzNsType:
		if t.Before(minNanoTime) || t.After(maxNanoTime) {
			return nil, misfit("a timestamp between 1678 and 2262")
		}
		return iceberg.NewLiteral(iceberg.TimestampNano(t.UnixNano())), nil
	}
	if l.relative {
		t = t.Truncate(time.Microsecond)
	}
	if t.Nanosecond()%1000 != 0 {
		return nil, misfit("at most microsecond precision")
	}
	return iceberg.NewLiteral(iceberg.Timestamp(t.UnixMicro())), nil
}

// parseDate reads yyyy-mm-dd as a UTC midnight.
func parseDate(s string) (time.Time, error) {
	return time.ParseInLocation("2006-01-02", strings.TrimSpace(s), time.UTC)
}

var (
	tsLayouts   = []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02"}
	zoneLayouts = []string{"", "Z07:00", "Z0700", "Z07"}
)

// parseTimestamp reads a date, optionally with a time ("T" or a space
// between) and an offset (Z, +02:00, -0500, +02; a space may precede it).
// Without an offset the time is UTC, never the local zone.
func parseTimestamp(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if len(s) > 10 && s[10] == ' ' {
		s = s[:10] + "T" + s[11:]
	}
	if i := strings.LastIndexByte(s, ' '); i > 10 {
		s = s[:i] + s[i+1:]
	}
	for _, base := range tsLayouts {
		for _, zone := range zoneLayouts {
			if t, err := time.ParseInLocation(base+zone, s, time.UTC); err == nil {
				return t, nil
			}
		}
	}
	return time.Time{}, errors.New("want yyyy-mm-dd[ hh:mm[:ss[.ffffff]]][Z|+hh:mm|-hhmm]")
}

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
