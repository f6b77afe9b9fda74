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
