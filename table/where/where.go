// Package where parses the --where language: a small SQL-like predicate
// that scopes a rewrite to the files that may hold matching rows. It is a
// leaf: it knows iceberg-go's expressions and the spatial bbox columns,
// nothing of the rewrite.
package where

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
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
// or a back-quoted one as Spark writes it (`My Col`, a doubled
// back-quote escaping one) matches exactly. Strings are single-quoted, a
// doubled quote standing for one, as in the example above.
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
