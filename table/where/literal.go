package where

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go"

	"github.com/geocompact/geocompact/internal/suggest"
)

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
		return nil, errAt(s, "bad %s literal %s: %v", strings.ToUpper(kw.text), suggest.Clip(s.raw), err)
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
			return nil, errAt(s, "bad interval %s: %v", suggest.Clip(s.raw), err)
		}
		if t.Before(minTime) || t.After(maxTime) {
			return nil, errAt(s, "interval %s takes %s out of range: a timestamp is microseconds since 1970, years %d to %d",
				suggest.Clip(s.raw), suggest.Clip(l.raw), minTime.Year(), maxTime.Year())
		}
		if !whole {
			l.kind = litTimestamp
		}
		l.t = t
		l.raw += " " + op.raw + " INTERVAL " + s.raw
	}
	return &operand{tok: start, lit: l}, nil
}

// minTime and maxTime bound the times a timestamp literal holds: Iceberg
// and Delta store microseconds since 1970 in an int64, and a time beyond
// them would wrap around to one that selects nothing (or everything).
var (
	minTime = time.UnixMicro(math.MinInt64).UTC()
	maxTime = time.UnixMicro(math.MaxInt64).UTC()
)

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

// convert types l by column c, failing when the value does not fit.
func (p *parser) convert(c *column, l *literal) (iceberg.Literal, error) {
	misfit := func(want string) error {
		return errAt(l.tok, "%s does not fit column %q of type %s: want %s", suggest.Clip(l.raw), c.name, c.field.Type, want)
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
	return nil, errAt(c.tok, "column %q has type %s, which a where predicate cannot compare", c.name, c.field.Type)
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
