package sql

import (
	"fmt"
	"strings"
)

// WhereText rewrites a where argument from Spark SQL's literal rules into
// the where language of engine/where: '…' and "…" are both strings, with
// backslash escapes, and become '…' with a doubled quote; `…` names a
// column and becomes "…"; == becomes =. Everything else is passed on as
// written, so where's own errors name the same tokens. Inside a string
// nothing is rewritten.
func WhereText(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == '\'' || c == '"':
			n, err := whereString(s, i, &b)
			if err != nil {
				return "", err
			}
			i += n
		case c == '`':
			n, err := whereColumn(s, i, &b)
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

// whereString writes the string literal at s[i] in where's form and
// returns its length in s.
func whereString(s string, i int, b *strings.Builder) (int, error) {
	q := s[i]
	var v strings.Builder
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case q:
			b.WriteByte('\'')
			b.WriteString(strings.ReplaceAll(v.String(), "'", "''"))
			b.WriteByte('\'')
			return j + 1 - i, nil
		case '\\':
			n, err := unescape(s, j, &v)
			if err != nil {
				return 0, fmt.Errorf("at %d: %w", j, err)
			}
			j += n - 1
		default:
			v.WriteByte(s[j])
		}
	}
	return 0, fmt.Errorf("at %d: unterminated string starting %q: add the closing %c", i, clip(s[i:]), q)
}

// whereColumn writes the back-quoted name at s[i] as a double-quoted one
// and returns its length in s.
func whereColumn(s string, i int, b *strings.Builder) (int, error) {
	var v strings.Builder
	for j := i + 1; j < len(s); j++ {
		if s[j] != '`' {
			v.WriteByte(s[j])
			continue
		}
		if j+1 < len(s) && s[j+1] == '`' {
			v.WriteByte('`')
			j++
			continue
		}
		b.WriteByte('"')
		b.WriteString(strings.ReplaceAll(v.String(), `"`, `""`))
		b.WriteByte('"')
		return j + 1 - i, nil
	}
	return 0, fmt.Errorf("at %d: unterminated quoted name starting %q: add the closing `", i, clip(s[i:]))
}
