package where

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/geocompact/geocompact/internal/suggest"
)

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
	return suggest.Excerpt(t.raw)
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
		case c == '\'' || c == '"' || c == '`':
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

// lexQuoted reads a '…' string, or a "…" identifier or a `…` one (as
// Spark quotes identifiers) starting at s[i]; a doubled quote inside
// stands for one.
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
		if q != '\'' {
			t.kind = tokQuotedIdent
			if t.text == "" {
				return token{}, &Error{Pos: i, Token: t.raw, Reason: "empty quoted column name"}
			}
		}
		return t, nil
	}
	what := "string"
	if q != '\'' {
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
		return token{}, &Error{Pos: i, Token: s[i:k], Reason: "malformed number " + suggest.Excerpt(s[i:k])}
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
