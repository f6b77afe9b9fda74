package sql

import (
	"fmt"
	"slices"
	"strings"
)

// WhereText rewrites a where argument from Spark SQL's literal rules into
// the where language of table/where: '…' and "…" are both strings, with
// backslash escapes, and become '…' with a doubled quote; `…` names a
// column and becomes "…"; == becomes =. Everything else is passed on as
// written, so where's own errors name the same tokens. Inside a string
// nothing is rewritten.
func WhereText(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == '\'' || c == '"' || c == '`':
			n, err := whereLiteral(s, i, &b)
			if err != nil {
				return "", err
			}
			i += n
		case c == '=' && i+1 < len(s) && s[i+1] == '=':
			b.WriteString("= ")
			i += 2
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), nil
}

// whereLiteral writes the quoted text at s[i] in the where language's
// form, a string as '…' and a back-quoted name as "…", and returns its
// length in s.
func whereLiteral(s string, i int, b *strings.Builder) (int, error) {
	v, end, err := scanQuoted(s, i)
	if err != nil {
		return 0, fmt.Errorf("at %d: %s", err.pos, err.reason)
	}
	q, double := "'", "''"
	if s[i] == '`' {
		q, double = `"`, `""`
	}
	b.WriteString(q + strings.ReplaceAll(v, q, double) + q)
	return end - i, nil
}

// predicate reads OPTIMIZE's (or REORG TABLE's) WHERE predicate into o:
// the text after WHERE up to one of the keywords stops (ZORDER or HILBERT;
// APPLY) outside parentheses, ";" outside parentheses or the end of the
// script, as Delta's grammar takes it. The predicate is scanned as text,
// not as tokens, so every operator of the where language passes; quotes
// and comments are honoured, and comments dropped.
func (p *parser) predicate(o *Optimize, stops ...string) error {
	where := p.tok
	text, end, err := scanPredicate(p.lex.src, p.lex.i, stops...)
	if err != nil {
		return err
	}
	if text == "" {
		return p.errAt(where, "WHERE without a predicate: write one, as in WHERE region = 'emea', or leave WHERE out")
	}
	w, werr := WhereText(text)
	if werr != nil {
		return p.errAt(where, "WHERE: %s", werr)
	}
	o.Where, o.SparkWhere = w, text
	p.lex.i = end
	return p.advance()
}

// scanPredicate returns the predicate starting at src[i], with comments
// replaced by blanks and trimmed, and the offset where it ends.
func scanPredicate(src string, i int, stops ...string) (string, int, error) {
	var b strings.Builder
	var open []int // offsets of the unclosed "("
scan:
	for i < len(src) {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
			strings.HasPrefix(src[i:], "--") || strings.HasPrefix(src[i:], "/*"):
			l := lexer{src: src, i: i}
			if err := l.skip(); err != nil {
				return "", 0, err
			}
			b.WriteByte(' ')
			i = l.i
		case c == '\'' || c == '"' || c == '`':
			_, end, qerr := scanQuoted(src, i)
			if qerr != nil {
				return "", 0, newError(src, qerr.pos, qerr.reason)
			}
			b.WriteString(src[i:end])
			i = end
		case c == '(':
			open = append(open, i)
			b.WriteByte(c)
			i++
		case c == ')':
			if len(open) == 0 {
				return "", 0, newError(src, i, `unbalanced ")" in the WHERE predicate`)
			}
			open = open[:len(open)-1]
			b.WriteByte(c)
			i++
		case c == ';' && len(open) == 0:
			break scan
		case isIdentPart(c):
			j := i + 1
			for j < len(src) && isIdentPart(src[j]) {
				j++
			}
			w := src[i:j]
			if len(open) == 0 && slices.ContainsFunc(stops, func(s string) bool { return strings.EqualFold(w, s) }) {
				break scan
			}
			b.WriteString(w)
			i = j
		default:
			b.WriteByte(c)
			i++
		}
	}
	if len(open) > 0 {
		return "", 0, newError(src, open[len(open)-1], `unclosed "(" in the WHERE predicate: add ")"`)
	}
	return strings.TrimSpace(b.String()), i, nil
}
