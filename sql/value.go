package sql

import (
	"fmt"
	"strings"
	"time"
)

// Kind is the type of a literal argument.
type Kind int

// The kinds of literal a CALL argument can be.
const (
	KindString Kind = iota + 1
	KindNumber
	KindBool
	KindTimestamp
	KindMap
	KindArray
)

var kindNames = map[Kind]string{KindString: "a string", KindNumber: "a number", KindBool: "a boolean",
	KindTimestamp: "a timestamp", KindMap: "a map", KindArray: "an array"}

// String names the kind with its article, for messages: "a string".
func (k Kind) String() string { return kindNames[k] }

// Value is one literal: a string, number, boolean, timestamp, or a map or
// array of those.
type Value struct {
	Kind Kind
	// Pos is the literal's byte offset in the script.
	Pos int
	// Text is a string's value, or a number as written (with its suffix).
	Text string
	// Bool is a boolean's value.
	Bool bool
	// Time is a timestamp's instant, in UTC.
	Time time.Time
	// Items are an array's elements, or a map's keys and values in turn.
	Items []Value
}

// value reads one literal.
func (p *parser) value() (Value, error) {
	t := p.tok
	switch {
	case t.kind == tokString:
		return p.strings()
	case t.kind == tokNumber:
		return Value{Kind: KindNumber, Pos: t.pos, Text: t.text}, p.advance()
	case t.keyword("TRUE") || t.keyword("FALSE"):
		return Value{Kind: KindBool, Pos: t.pos, Bool: t.keyword("TRUE")}, p.advance()
	case t.keyword("MAP") || t.keyword("ARRAY"):
		return p.collection()
	case t.kind == tokIdent && !t.quoted:
		return p.typed()
	}
	return Value{}, p.unexpected("a value: 'string', number, TRUE, FALSE, TIMESTAMP '…', map(…) or array(…)")
}

// strings reads one or more adjacent string literals, which Spark
// concatenates.
func (p *parser) strings() (Value, error) {
	v := Value{Kind: KindString, Pos: p.tok.pos}
	var b strings.Builder
	for p.tok.kind == tokString {
		b.WriteString(p.tok.text)
		if err := p.advance(); err != nil {
			return v, err
		}
	}
	v.Text = b.String()
	return v, nil
}

// typed reads TIMESTAMP '…' or DATE '…'.
func (p *parser) typed() (Value, error) {
	t := p.tok
	kw := strings.ToUpper(t.text)
	switch kw {
	case "TIMESTAMP", "TIMESTAMP_LTZ", "TIMESTAMP_NTZ", "DATE":
	case "NULL":
		return Value{}, p.errAt(t, "NULL: leave the argument out instead, and it takes its default")
	default:
		return Value{}, p.errAt(t, "unexpected %s, want a value: 'string', number, TRUE, FALSE, TIMESTAMP '…', map(…) or array(…)", t.describe())
	}
	if err := p.advance(); err != nil {
		return Value{}, err
	}
	if p.tok.kind != tokString {
		return Value{}, p.unexpected(fmt.Sprintf("a quoted literal after %s, as in %s '2026-01-02 00:00:00'", kw, kw))
	}
	s := p.tok
	if err := p.advance(); err != nil {
		return Value{}, err
	}
	var ts time.Time
	var err error
	if kw == "DATE" {
		ts, err = time.ParseInLocation(time.DateOnly, strings.TrimSpace(s.text), time.UTC)
	} else {
		ts, err = ParseTimestamp(s.text)
	}
	if err != nil {
		return Value{}, p.errAt(s, "%s %s: want %s", kw, s.raw, timestampForms)
	}
	return Value{Kind: KindTimestamp, Pos: t.pos, Time: ts}, nil
}

// collection reads map(k, v, …) or array(x, …), whose items are plain
// literals.
func (p *parser) collection() (Value, error) {
	t := p.tok
	v := Value{Kind: KindArray, Pos: t.pos, Items: []Value{}}
	if t.keyword("MAP") {
		v.Kind = KindMap
	}
	if err := p.advance(); err != nil {
		return v, err
	}
	if _, err := p.expect(tokLParen, `"(" after `+strings.ToLower(t.text)); err != nil {
		return v, err
	}
	for p.tok.kind != tokRParen {
		if len(v.Items) > 0 {
			if _, err := p.expect(tokComma, `"," or ")"`); err != nil {
				return v, err
			}
		}
		if p.tok.keyword("MAP") || p.tok.keyword("ARRAY") {
			return v, p.errAt(p.tok, "%s inside %s: procedure arguments hold plain literals only", strings.ToLower(p.tok.text), strings.ToLower(t.text))
		}
		item, err := p.value()
		if err != nil {
			return v, err
		}
		v.Items = append(v.Items, item)
	}
	if v.Kind == KindMap && len(v.Items)%2 != 0 {
		return v, p.errAt(p.tok, "map has %d items: it takes keys and values in pairs, map('k1', 'v1', 'k2', 'v2')", len(v.Items))
	}
	return v, p.advance()
}

const timestampForms = "yyyy-mm-dd[ hh:mm[:ss[.ffffff]]] with an optional offset (Z, +02:00, -0500)"

// ParseTimestamp reads a timestamp as Spark's TIMESTAMP literal writes
// it: a date, optionally a time after a space or T, and optionally an
// offset (Z, UTC, +02, +02:00, -0500). Without an offset the time is UTC,
// never the local zone, so a script means the same on every machine.
func ParseTimestamp(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if rest, ok := strings.CutSuffix(s, " UTC"); ok {
		s = rest + "Z"
	}
	s = strings.ReplaceAll(strings.Replace(s, " ", "T", 1), " ", "")
	for _, layout := range []string{"2006-01-02T15:04:05.999999999Z07:00", "2006-01-02T15:04:05.999999999Z0700",
		"2006-01-02T15:04:05.999999999Z07", "2006-01-02T15:04Z07:00", "2006-01-02T15:04Z0700",
		"2006-01-02T15:04:05.999999999", "2006-01-02T15:04", "2006-01-02"} {
		if ts, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return ts.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("timestamp %q: want %s", s, timestampForms)
}
