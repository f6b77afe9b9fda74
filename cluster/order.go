package cluster

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ErrSortOrder reports a sort order that does not parse, or that does not
// fit the schema it is applied to.
var ErrSortOrder = errors.New("cluster: sort order")

// Curve is the kind of order: lexicographic over columns, or a space-filling
// curve over several.
type Curve int

// The curves an Order can follow.
const (
	CurveLinear Curve = iota
	CurveZOrder
	CurveHilbert
	// CurveSTR is sort-tile-recursive packing: rows in vertical slabs cut
	// at quantiles of x, then by y within each slab (see the package doc).
	CurveSTR
	// CurveKD is a k-d tree over the rows' positions whose leaves are the
	// output files, each split's axis chosen by its cost for sample query
	// windows (see kd.go).
	CurveKD
)

// Direction is the direction of a linear sort field.
type Direction int

// Sort directions.
const (
	Asc Direction = iota
	Desc
)

// NullOrder places the nulls of a linear sort field.
type NullOrder int

// Null placements.
const (
	NullsFirst NullOrder = iota
	NullsLast
)

// Field is one column of a linear order.
type Field struct {
	Column    string
	Direction Direction
	Nulls     NullOrder
}

// String returns the field in canonical form, e.g. "ts DESC NULLS LAST".
func (f Field) String() string {
	dir, nulls := "ASC", "NULLS FIRST"
	if f.Direction == Desc {
		dir = "DESC"
	}
	if f.Nulls == NullsLast {
		nulls = "NULLS LAST"
	}
	return quoteIdent(f.Column) + " " + dir + " " + nulls
}

// Order is a parsed sort order. For CurveLinear, Fields lists the columns
// in significance order. For the curves, Columns lists the curve's
// arguments; empty means the row's spatial position (see the package doc).
type Order struct {
	Curve   Curve
	Fields  []Field
	Columns []string
}

// MaxCurveDims is the most dimensions a curve can run over: a 64-bit key
// holds 16 bits for each of 4.
const MaxCurveDims = 4

// String returns the canonical form of o, which ParseOrder reads back to
// an equal Order. Snapshot summaries record it.
func (o Order) String() string {
	if o.Curve == CurveLinear {
		parts := make([]string, len(o.Fields))
		for i, f := range o.Fields {
			parts[i] = f.String()
		}
		return strings.Join(parts, ", ")
	}
	parts := make([]string, len(o.Columns))
	for i, c := range o.Columns {
		parts[i] = quoteIdent(c)
	}
	return o.Curve.String() + "(" + strings.Join(parts, ", ") + ")"
}

// ParseOrder parses a sort order expression:
//
//	col [ASC|DESC] [NULLS FIRST|NULLS LAST], ...
//	zorder(col, ...)
//	hilbert(col, ...)
//	str(col)
//
// Keywords are case-insensitive. Directions default to ASC and nulls to
// Iceberg's defaults: NULLS FIRST for ASC, NULLS LAST for DESC. A curve
// takes up to four columns, or none for the row's spatial position; str
// takes at most one, a spatial column.
// Columns are identifiers (letters, digits, '_', '.') or double-quoted
// names with "" for a quote. Errors wrap ErrSortOrder and name the
// offending token and column.
func ParseOrder(expr string) (Order, error) {
	p := &parser{lex: lexer{src: expr}}
	p.next()
	if p.tok.kind == tokEOF {
		return Order{}, fmt.Errorf("%w: empty expression", ErrSortOrder)
	}
	if p.tok.kind == tokIdent && !p.tok.quoted {
		if c, ok := functionCurve(p.tok.text); ok {
			save := p.lex
			name := p.tok.text
			p.next()
			if p.tok.kind == tokLParen {
				return p.curve(c, name)
			}
			p.lex = save // a column that happens to be named zorder
			p.tok = token{kind: tokIdent, text: name}
		}
	}
	return p.linear()
}

type tokKind int

const (
	tokEOF tokKind = iota
	tokIdent
	tokComma
	tokLParen
	tokRParen
	tokBad
)

type token struct {
	kind   tokKind
	text   string
	quoted bool
}

func (t token) String() string {
	switch t.kind {
	case tokEOF:
		return "end of expression"
	case tokIdent:
		if t.quoted {
			return fmt.Sprintf("token %q", quoteIdent(t.text))
		}
	}
	return fmt.Sprintf("token %q", t.text)
}

type lexer struct {
	src string
	pos int
}

func isIdentRune(r rune) bool {
	return r == '_' || r == '.' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

func (l *lexer) next() token {
	for l.pos < len(l.src) {
		r, n := utf8.DecodeRuneInString(l.src[l.pos:])
		if !unicode.IsSpace(r) {
			break
		}
		l.pos += n
	}
	if l.pos >= len(l.src) {
		return token{kind: tokEOF}
	}
	r, n := utf8.DecodeRuneInString(l.src[l.pos:])
	switch {
	case r == ',':
		l.pos += n
		return token{kind: tokComma, text: ","}
	case r == '(':
		l.pos += n
		return token{kind: tokLParen, text: "("}
	case r == ')':
		l.pos += n
		return token{kind: tokRParen, text: ")"}
	case r == '"':
		return l.quoted()
	case isIdentRune(r):
		start := l.pos
		for l.pos < len(l.src) {
			r, n := utf8.DecodeRuneInString(l.src[l.pos:])
			if !isIdentRune(r) {
				break
			}
			l.pos += n
		}
		return token{kind: tokIdent, text: l.src[start:l.pos]}
	}
	l.pos += n
	return token{kind: tokBad, text: string(r)}
}

func (l *lexer) quoted() token {
	var b strings.Builder
	start := l.pos
	l.pos++ // opening quote
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		if c == '"' {
			if l.pos+1 < len(l.src) && l.src[l.pos+1] == '"' {
				b.WriteByte('"')
				l.pos += 2
				continue
			}
			l.pos++
			if b.Len() == 0 {
				return token{kind: tokBad, text: `""`}
			}
			return token{kind: tokIdent, text: b.String(), quoted: true}
		}
		b.WriteByte(c)
		l.pos++
	}
	return token{kind: tokBad, text: l.src[start:]}
}

// quoteIdent returns name as ParseOrder reads it back: bare when it is a
// plain identifier that is not a keyword, else double-quoted.
func quoteIdent(name string) string {
	plain := name != "" && utf8.ValidString(name)
	for _, r := range name {
		if !isIdentRune(r) {
			plain = false
			break
		}
	}
	if plain && !isKeyword(name) && !isFunction(name) {
		return name
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

func isKeyword(s string) bool {
	switch strings.ToUpper(s) {
	case "ASC", "DESC", "NULLS", "FIRST", "LAST":
		return true
	}
	return false
}

type parser struct {
	lex lexer
	tok token
}

func (p *parser) next() { p.tok = p.lex.next() }

func (p *parser) keyword(kw string) bool {
	return p.tok.kind == tokIdent && !p.tok.quoted && strings.EqualFold(p.tok.text, kw)
}

func (p *parser) column(after string) (string, error) {
	if p.tok.kind != tokIdent || (!p.tok.quoted && isKeyword(p.tok.text)) {
		return "", fmt.Errorf("%w: expected a column %s, got %s", ErrSortOrder, after, p.tok)
	}
	name := p.tok.text
	p.next()
	return name, nil
}

func (p *parser) linear() (Order, error) {
	o := Order{Curve: CurveLinear}
	seen := map[string]bool{}
	after := "at the start"
	for {
		name, err := p.column(after)
		if err != nil {
			return Order{}, err
		}
		if seen[name] {
			return Order{}, fmt.Errorf("%w: column %q listed twice", ErrSortOrder, name)
		}
		seen[name] = true
		f := Field{Column: name, Direction: Asc, Nulls: NullsFirst}
		if p.keyword("ASC") {
			p.next()
		} else if p.keyword("DESC") {
			f.Direction, f.Nulls = Desc, NullsLast
			p.next()
		}
		if p.keyword("NULLS") {
			p.next()
			switch {
			case p.keyword("FIRST"):
				f.Nulls = NullsFirst
			case p.keyword("LAST"):
				f.Nulls = NullsLast
			default:
				return Order{}, fmt.Errorf("%w: expected FIRST or LAST after NULLS for column %q, got %s", ErrSortOrder, name, p.tok)
			}
			p.next()
		}
		o.Fields = append(o.Fields, f)
		switch p.tok.kind {
		case tokEOF:
			return o, nil
		case tokComma:
			p.next()
			after = fmt.Sprintf("after the comma following %q", name)
		default:
			return Order{}, fmt.Errorf("%w: unexpected %s after column %q", ErrSortOrder, p.tok, name)
		}
	}
}

func (p *parser) curve(c Curve, name string) (Order, error) {
	o := Order{Curve: c}
	p.next() // (
	seen := map[string]bool{}
	if p.tok.kind == tokRParen {
		p.next()
	} else {
		after := "in " + name + "("
		for {
			col, err := p.column(after)
			if err != nil {
				return Order{}, err
			}
			if seen[col] {
				return Order{}, fmt.Errorf("%w: column %q listed twice in %s", ErrSortOrder, col, name)
			}
			seen[col] = true
			o.Columns = append(o.Columns, col)
			if limit := curveArgs(c); len(o.Columns) > limit {
				return Order{}, fmt.Errorf("%w: %s takes at most %d %s, got more at %q", ErrSortOrder, name, limit, plural(limit, "column"), col)
			}
			if p.tok.kind == tokRParen {
				p.next()
				break
			}
			if p.tok.kind != tokComma {
				return Order{}, fmt.Errorf("%w: unexpected %s after column %q in %s", ErrSortOrder, p.tok, col, name)
			}
			p.next()
			after = fmt.Sprintf("after the comma following %q", col)
		}
	}
	if p.tok.kind != tokEOF {
		return Order{}, fmt.Errorf("%w: unexpected %s after %s(...); a curve must be the whole order", ErrSortOrder, p.tok, name)
	}
	return o, nil
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
