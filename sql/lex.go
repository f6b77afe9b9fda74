package sql

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

type tokKind int

const (
	tokEOF    tokKind = iota
	tokIdent          // bare or `back-quoted` identifier
	tokString         // '…' or "…", unescaped
	tokNumber         // digits with an optional fraction, exponent and type suffix
	tokLParen         // (
	tokRParen         // )
	tokComma          // ,
	tokDot            // .
	tokSemi           // ;
	tokArrow          // =>
	tokEq             // =
)

// token is one lexeme: text is the value (unescaped for strings and quoted
// identifiers), raw the source text, pos its byte offset.
type token struct {
	kind   tokKind
	pos    int
	text   string
	raw    string
	quoted bool // a back-quoted identifier: never a keyword
}

// keyword reports whether t is the bare word kw, case-insensitively.
func (t token) keyword(kw string) bool {
	return t.kind == tokIdent && !t.quoted && strings.EqualFold(t.text, kw)
}

func (t token) describe() string {
	if t.kind == tokEOF {
		return "end of input"
	}
	return strconv.Quote(clip(t.raw))
}

// lexer turns a script into tokens, skipping blanks and comments.
type lexer struct {
	src string
	i   int
}

func (l *lexer) errAt(pos int, format string, args ...any) *Error {
	return newError(l.src, pos, fmt.Sprintf(format, args...))
}

func (l *lexer) next() (token, error) {
	if err := l.skip(); err != nil {
		return token{}, err
	}
	s, i := l.src, l.i
	if i >= len(s) {
		return token{kind: tokEOF, pos: i}, nil
	}
	single := map[byte]tokKind{'(': tokLParen, ')': tokRParen, ',': tokComma, '.': tokDot, ';': tokSemi}
	c := s[i]
	switch {
	case c == '=' && strings.HasPrefix(s[i:], "=>"):
		return l.emit(tokArrow, i+2, "=>"), nil
	case c == '=':
		return l.emit(tokEq, i+1, "="), nil
	case c == '.' && i+1 < len(s) && isDigit(s[i+1]):
		return l.number()
	case single[c] != 0:
		return l.emit(single[c], i+1, s[i:i+1]), nil
	case c == '\'' || c == '"':
		return l.str()
	case c == '`':
		return l.quotedIdent()
	case isDigit(c) || (c == '-' || c == '+') && i+1 < len(s) && (isDigit(s[i+1]) || s[i+1] == '.'):
		return l.number()
	case isIdentStart(c):
		j := i + 1
		for j < len(s) && isIdentPart(s[j]) {
			j++
		}
		return l.emit(tokIdent, j, s[i:j]), nil
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return token{}, l.errAt(i, "unexpected character %q", r)
}

// emit returns the token from l.i to end with value text and moves past it.
func (l *lexer) emit(k tokKind, end int, text string) token {
	t := token{kind: k, pos: l.i, text: text, raw: l.src[l.i:end]}
	l.i = end
	return t
}

// skip moves past blanks, -- line comments and /* */ comments (which nest,
// as Spark's do).
func (l *lexer) skip() error {
	s := l.src
	for l.i < len(s) {
		switch {
		case s[l.i] == ' ' || s[l.i] == '\t' || s[l.i] == '\n' || s[l.i] == '\r' || s[l.i] == '\f':
			l.i++
		case strings.HasPrefix(s[l.i:], "--"):
			end := strings.IndexByte(s[l.i:], '\n')
			if end < 0 {
				l.i = len(s)
			} else {
				l.i += end + 1
			}
		case strings.HasPrefix(s[l.i:], "/*"):
			start, depth := l.i, 0
			for l.i < len(s) {
				switch {
				case strings.HasPrefix(s[l.i:], "/*"):
					depth++
					l.i += 2
				case strings.HasPrefix(s[l.i:], "*/"):
					depth--
					l.i += 2
				default:
					l.i++
				}
				if depth == 0 {
					break
				}
			}
			if depth > 0 {
				return l.errAt(start, "unterminated /* comment: add */")
			}
		default:
			return nil
		}
	}
	return nil
}

// str reads a '…' or "…" string literal with Spark's backslash escapes.
// In Spark SQL a double-quoted literal is a string, not an identifier.
func (l *lexer) str() (token, error) {
	v, end, err := scanQuoted(l.src, l.i)
	if err != nil {
		return token{}, l.errAt(err.pos, "%s", err.reason)
	}
	return l.emit(tokString, end, v), nil
}

// scanQuoted reads the quoted text starting at s[i]: a '…' or "…" string
// with backslash escapes, or a `…` name with a doubled back-quote for one.
// It returns the value and the offset just past the closing quote.
func scanQuoted(s string, i int) (string, int, *quoteError) {
	q := s[i]
	var b strings.Builder
	for j := i + 1; j < len(s); j++ {
		switch {
		case s[j] == q && q == '`' && j+1 < len(s) && s[j+1] == '`':
			b.WriteByte('`')
			j++
		case s[j] == q:
			return b.String(), j + 1, nil
		case s[j] == '\\' && q != '`':
			n, err := unescape(s, j, &b)
			if err != nil {
				return "", 0, &quoteError{pos: j, reason: err.Error()}
			}
			j += n - 1
		default:
			b.WriteByte(s[j])
		}
	}
	what := "string"
	if q == '`' {
		what = "quoted name"
	}
	return "", 0, &quoteError{pos: i, reason: fmt.Sprintf("unterminated %s starting %q: add the closing %c", what, clip(s[i:]), q)}
}

// quoteError is a malformed quoted text: what is wrong, and where.
type quoteError struct {
	pos    int
	reason string
}

// unescape writes the value of the escape sequence at s[i] (a backslash)
// to b and returns its length, following Spark's rules: \' \" \\ \b \n \r
// \t \Z \0, \uXXXX, octal \ooo, \% and \_ kept with their backslash (they
// are LIKE escapes), and any other \c standing for c.
func unescape(s string, i int, b *strings.Builder) (int, error) {
	if i+1 >= len(s) {
		return 0, fmt.Errorf("backslash at the end of the input")
	}
	c := s[i+1]
	simple := map[byte]string{'b': "\b", 'n': "\n", 'r': "\r", 't': "\t", 'Z': "\x1a", '0': "\x00", '%': `\%`, '_': `\_`}
	switch {
	case c == 'u':
		if i+6 > len(s) {
			return 0, fmt.Errorf(`\u needs four hex digits`)
		}
		r, err := strconv.ParseUint(s[i+2:i+6], 16, 32)
		if err != nil {
			return 0, fmt.Errorf(`\u%s: want four hex digits`, s[i+2:i+6])
		}
		b.WriteRune(rune(r))
		return 6, nil
	case c >= '0' && c <= '3' && i+3 < len(s) && isOctal(s[i+2]) && isOctal(s[i+3]):
		b.WriteByte((c-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
		return 4, nil
	case simple[c] != "":
		b.WriteString(simple[c])
		return 2, nil
	}
	r, n := utf8.DecodeRuneInString(s[i+1:])
	b.WriteRune(r)
	return 1 + n, nil
}

func (l *lexer) quotedIdent() (token, error) {
	v, end, err := scanQuoted(l.src, l.i)
	switch {
	case err != nil:
		return token{}, l.errAt(err.pos, "%s", err.reason)
	case v == "":
		return token{}, l.errAt(l.i, "empty quoted identifier ``")
	}
	t := l.emit(tokIdent, end, v)
	t.quoted = true
	return t, nil
}

// numberPattern is [+-] digits [. digits] [e [+-] digits] with an
// optional Spark type suffix (L, S, Y, D, F, BD).
var numberPattern = regexp.MustCompile(`^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?([bB][dD]|[LSYDFlsydf])?`)

// number reads the number at l.i; one running into letters is malformed.
func (l *lexer) number() (token, error) {
	s, start := l.src, l.i
	end := start + len(numberPattern.FindString(s[start:]))
	if end == start || end < len(s) && (isIdentPart(s[end]) || s[end] == '.') {
		k := max(end, start+1)
		for k < len(s) && (isIdentPart(s[k]) || s[k] == '.') {
			k++
		}
		return token{}, l.errAt(start, "malformed number %q", s[start:k])
	}
	return l.emit(tokNumber, end, s[start:end]), nil
}

func isDigit(c byte) bool      { return c >= '0' && c <= '9' }
func isOctal(c byte) bool      { return c >= '0' && c <= '7' }
func isIdentStart(c byte) bool { return c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z') }
func isIdentPart(c byte) bool  { return isIdentStart(c) || isDigit(c) }

// clip shortens s for an error message.
func clip(s string) string {
	if r := []rune(s); len(r) > 32 {
		return string(r[:32]) + "…"
	}
	return s
}
