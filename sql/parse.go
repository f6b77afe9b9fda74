// Package sql parses Spark SQL CALL statements, the way Iceberg's stored
// procedures are invoked from Spark, and binds them to the procedures
// geocompact runs: rewrite_data_files, expire_snapshots,
// remove_orphan_files and rewrite_manifests. It also parses Delta Lake's
// VACUUM and OPTIMIZE statements on a table named by location (with
// geocompact's HILBERT BY beside ZORDER BY), and Spark's ALTER TABLE ...
// SET/UNSET TBLPROPERTIES and WRITE ORDERED BY/UNORDERED (Iceberg's
// extension) on an Iceberg or Delta table, into typed statements. It is a
// leaf: it knows the statements and the procedures' signatures, nothing of
// catalogs, tables or the rewrite; sql/procedure runs what it parses.
package sql

import (
	"errors"
	"fmt"
	"strings"
)

// ErrInvalid is the category of every error Parse and Bind return.
var ErrInvalid = errors.New("sql: invalid statement")

// Error reports where a script went wrong. It unwraps to ErrInvalid.
type Error struct {
	// Pos is the 0-based byte offset of the offending text in the script;
	// Line and Col (1-based, Col in bytes) say the same for people.
	Pos, Line, Col int
	// Reason says what is wrong and, where one is obvious, the fix.
	Reason string
}

func newError(src string, pos int, reason string) *Error {
	pos = min(max(pos, 0), len(src))
	line := 1 + strings.Count(src[:pos], "\n")
	col := pos - strings.LastIndexByte(src[:pos], '\n')
	return &Error{Pos: pos, Line: line, Col: col, Reason: reason}
}

// Error implements error: "sql: invalid statement: line 2, column 14: …".
func (e *Error) Error() string {
	return fmt.Sprintf("%v: line %d, column %d: %s", ErrInvalid, e.Line, e.Col, e.Reason)
}

// Unwrap returns ErrInvalid.
func (e *Error) Unwrap() error { return ErrInvalid }

// Statement is one statement as written: a CALL of a procedure, Delta
// Lake's VACUUM or OPTIMIZE, or ALTER TABLE (see Command).
type Statement struct {
	// Index is the statement's 1-based position in the script.
	Index int
	// Pos is the byte offset of the statement's first keyword; Line its
	// 1-based line.
	Pos, Line int
	// Catalog is the catalog part of the name, "" when the statement
	// names only system.proc (the current catalog).
	Catalog string
	// Procedure is the procedure's name as written, without system.
	Procedure string
	// Args are the arguments in order. Named arguments have a Name;
	// Spark refuses a mix of named and positional ones, and so does Parse.
	Args []Arg
	// Vacuum is set for a VACUUM statement and Optimize for an OPTIMIZE
	// statement; a CALL has neither, and they (and Alter) leave the fields
	// of a CALL (Catalog, Procedure, Args) zero.
	Vacuum   *Vacuum
	Optimize *Optimize
	// Alter is set for an ALTER TABLE statement.
	Alter *Alter
	// Text is the statement's source text, without the separator.
	Text string
}

// Arg is one argument of a CALL.
type Arg struct {
	// Name is the argument's name for name => value, "" for a positional one.
	Name string
	// Pos is the byte offset of the argument (its name, or its value).
	Pos   int
	Value Value
}

// maxStatements bounds a script, so a hostile input cannot take unbounded
// memory: no maintenance script needs ten thousand calls.
const maxStatements = 10000

// Parse reads a script of statements separated by semicolons:
//
//	script    := [stmt] { ";" [stmt] }
//	stmt      := call | vacuum | optimize | alter
//	call      := CALL [catalog "."] system "." procedure "(" [args] ")"
//	args      := arg { "," arg }
//	arg       := name "=>" value | value
//	value     := string { string } | number | TRUE | FALSE
//	           | TIMESTAMP string | DATE string
//	           | MAP "(" [value "," value { "," value "," value }] ")"
//	           | ARRAY "(" [value { "," value }] ")"
//	vacuum    := VACUUM delta [RETAIN number HOURS] [DRY RUN]
//	optimize  := OPTIMIZE delta [WHERE predicate]
//	             [(ZORDER | HILBERT) BY ("(" cols ")" | cols)]
//	alter     := ALTER TABLE (name | delta) action
//	action    := SET TBLPROPERTIES "(" key ["="] pvalue { "," key ["="] pvalue } ")"
//	           | UNSET TBLPROPERTIES [IF EXISTS] "(" key { "," key } ")"
//	           | WRITE [LOCALLY] ORDERED BY order | WRITE UNORDERED
//	key       := string | name { "." name },  pvalue := string | number | TRUE | FALSE
//	order     := fields | "(" fields ")" | curve "(" [cols] ")",  curve := ZORDER | HILBERT | STR
//	fields    := col [ASC | DESC] [NULLS (FIRST | LAST)] { "," … }
//	delta     := DELTA "." `location` | 'location'
//	cols      := col { "," col },  col := name { "." name }
//
// These are Spark SQL's rules: keywords and names are case-insensitive and
// may be `back-quoted`; strings take single or double quotes (a
// double-quoted literal is a string, not a name) with backslash escapes,
// and adjacent strings are concatenated; numbers may carry Spark's type
// suffixes (10L, 2.5D). TIMESTAMP '2026-01-02 03:04:05' is UTC unless the
// literal carries an offset. -- and /* */ comments are blanks.
//
// VACUUM and OPTIMIZE follow Delta Lake's grammar, on tables named by
// location only. OPTIMIZE's predicate runs up to ZORDER, HILBERT, ";" or
// the end, outside parentheses, and is translated by WhereText. HILBERT BY
// is geocompact's; a curve takes at most cluster.MaxCurveDims columns.
//
// ALTER TABLE follows Spark's grammar with Iceberg's WRITE ORDERED BY and
// WRITE UNORDERED; ORDERED BY takes geocompact's curves as --sort-order
// does. delta.`location` (back-quoted) names a Delta table, delta.name an
// Iceberg table in namespace delta. See Alter.
//
// Errors are *Error, with the position of the offending token.
func Parse(script string) ([]Statement, error) {
	p := &parser{lex: lexer{src: script}}
	if err := p.advance(); err != nil {
		return nil, err
	}
	var out []Statement
	for p.tok.kind != tokEOF {
		if p.tok.kind == tokSemi {
			if err := p.advance(); err != nil {
				return nil, err
			}
			continue
		}
		if len(out) == maxStatements {
			return nil, p.errAt(p.tok, "more than %d statements: split the script", maxStatements)
		}
		st, err := p.statement()
		if err != nil {
			return nil, err
		}
		st.Index = len(out) + 1
		out = append(out, st)
		switch p.tok.kind {
		case tokSemi, tokEOF:
		default:
			return nil, p.unexpected(`";" between statements`)
		}
	}
	if len(out) == 0 {
		return nil, newError(script, len(script), "no statement in the script: want CALL, VACUUM, OPTIMIZE, REORG TABLE or ALTER TABLE")
	}
	return out, nil
}

type parser struct {
	lex lexer
	tok token
}

func (p *parser) advance() error {
	t, err := p.lex.next()
	if err != nil {
		return err
	}
	p.tok = t
	return nil
}

func (p *parser) errAt(t token, format string, args ...any) *Error {
	return newError(p.lex.src, t.pos, fmt.Sprintf(format, args...))
}

func (p *parser) unexpected(want string) *Error {
	return p.errAt(p.tok, "unexpected %s, want %s", p.tok.describe(), want)
}

// expect checks that the current token is of kind k and moves past it.
func (p *parser) expect(k tokKind, want string) (token, error) {
	t := p.tok
	if t.kind != k {
		return t, p.unexpected(want)
	}
	return t, p.advance()
}

func (p *parser) statement() (Statement, error) {
	start := p.tok
	st := Statement{Pos: start.pos, Line: newError(p.lex.src, start.pos, "").Line}
	switch {
	case start.keyword(CommandVacuum), start.keyword(CommandOptimize), start.keyword(CommandReorg):
		err := p.deltaStatement(&st, strings.ToUpper(start.text))
		st.Text = strings.TrimSpace(p.lex.src[start.pos:p.tok.pos])
		return st, err
	case start.keyword("ALTER"):
		a, err := p.alterStatement()
		st.Alter, st.Text = a, strings.TrimSpace(p.lex.src[start.pos:p.tok.pos])
		return st, err
	case !start.keyword(CommandCall):
		return st, p.unexpected("CALL, VACUUM, OPTIMIZE, REORG TABLE or ALTER TABLE (geocompact runs only these statements)")
	}
	if err := p.advance(); err != nil {
		return st, err
	}
	if err := p.name(&st); err != nil {
		return st, err
	}
	if _, err := p.expect(tokLParen, `"(" after the procedure name`); err != nil {
		return st, err
	}
	if err := p.args(&st); err != nil {
		return st, err
	}
	end := p.tok
	if _, err := p.expect(tokRParen, `"," or ")"`); err != nil {
		return st, err
	}
	st.Text = p.lex.src[start.pos : end.pos+1]
	return st, nil
}

// name reads [catalog.]system.procedure.
func (p *parser) name(st *Statement) error {
	var parts []token
	for {
		t, err := p.expect(tokIdent, "a procedure name such as system.rewrite_data_files")
		if err != nil {
			return err
		}
		parts = append(parts, t)
		if p.tok.kind != tokDot {
			break
		}
		if err := p.advance(); err != nil {
			return err
		}
	}
	if len(parts) < 2 || len(parts) > 3 {
		return p.errAt(parts[0], "procedure name %q has %d parts, want [catalog.]system.procedure", joinText(parts), len(parts))
	}
	ns := parts[len(parts)-2]
	if !strings.EqualFold(ns.text, "system") {
		return p.errAt(ns, "namespace %q: Iceberg's procedures live in system, as in %s.system.%s", ns.text, orDefault(parts), parts[len(parts)-1].text)
	}
	if len(parts) == 3 {
		st.Catalog = parts[0].text
	}
	st.Procedure = parts[len(parts)-1].text
	return nil
}

func joinText(ts []token) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = t.text
	}
	return strings.Join(s, ".")
}

func orDefault(parts []token) string {
	if len(parts) == 3 {
		return parts[0].text
	}
	return "catalog"
}

// args reads the argument list up to (not including) ")".
func (p *parser) args(st *Statement) error {
	if p.tok.kind == tokRParen {
		return nil
	}
	seen := map[string]bool{}
	for {
		a, err := p.arg()
		if err != nil {
			return err
		}
		if len(st.Args) > 0 && (a.Name == "") != (st.Args[0].Name == "") {
			return newError(p.lex.src, a.Pos, "named and positional arguments cannot be mixed: name every argument or none")
		}
		key := strings.ToLower(a.Name)
		if a.Name != "" && seen[key] {
			return newError(p.lex.src, a.Pos, fmt.Sprintf("argument %s is given twice", a.Name))
		}
		seen[key] = true
		st.Args = append(st.Args, a)
		if p.tok.kind != tokComma {
			return nil
		}
		if err := p.advance(); err != nil {
			return err
		}
	}
}

func (p *parser) arg() (Arg, error) {
	t := p.tok
	if t.kind == tokIdent {
		save, saveTok := p.lex, p.tok
		if err := p.advance(); err != nil {
			return Arg{}, err
		}
		if p.tok.kind == tokArrow {
			if err := p.advance(); err != nil {
				return Arg{}, err
			}
			v, err := p.value()
			return Arg{Name: t.text, Pos: t.pos, Value: v}, err
		}
		p.lex, p.tok = save, saveTok
	}
	v, err := p.value()
	return Arg{Pos: t.pos, Value: v}, err
}
