package sql

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/geocompact/geocompact/cluster"
)

// The commands a statement can be: Statement.Command returns one.
const (
	CommandCall     = "CALL"
	CommandVacuum   = "VACUUM"
	CommandOptimize = "OPTIMIZE"
	CommandReorg    = "REORG"
)

// Vacuum is Delta Lake's VACUUM statement:
//
//	VACUUM table [RETAIN number HOURS] [DRY RUN]
//	table := delta.`location` | 'location'
type Vacuum struct {
	// Location is the Delta table's location as written: a directory, a
	// file: URL or s3://bucket/prefix.
	Location string
	// Retain is RETAIN N HOURS, when HasRetain is set; without it the
	// table's delta.deletedFileRetentionDuration applies. N may have a
	// fraction, as in Delta, and is never negative.
	Retain    time.Duration
	HasRetain bool
	// DryRun is DRY RUN: list the files, delete nothing.
	DryRun bool
}

// Optimize is Delta Lake's OPTIMIZE statement, with geocompact's HILBERT
// BY beside Delta's ZORDER BY:
//
//	OPTIMIZE table [WHERE predicate] [(ZORDER | HILBERT) BY (col, …)]
//	table := delta.`location` | 'location'
type Optimize struct {
	// Location is the Delta table's location as written.
	Location string
	// Where is the WHERE predicate in the where language of table/where,
	// translated from Spark's literal rules by WhereText; SparkWhere is the
	// predicate as written, comments removed. Both are "" without WHERE.
	Where, SparkWhere string
	// Curve is "zorder" for ZORDER BY, "hilbert" for HILBERT BY, and ""
	// for neither: bin-packing without a sort.
	Curve string
	// Columns are the curve's columns in order; a nested field is its path
	// joined by dots (bbox.xmin). Empty when Curve is "".
	Columns []string
	// Purge is set for Delta's REORG TABLE … APPLY (PURGE), which this
	// type also holds: rewrite exactly the files that carry a deletion
	// vector, whatever their size (Curve is then "").
	//
	//	REORG TABLE table [WHERE predicate] APPLY (PURGE)
	Purge bool
}

// Statement returns the statement's name as messages give it: "OPTIMIZE"
// or "REORG TABLE".
func (o *Optimize) Statement() string {
	if o.Purge {
		return "REORG TABLE"
	}
	return CommandOptimize
}

// SortOrder returns the statement's order as cluster.ParseOrder reads it,
// "zorder(a, b)" or "hilbert(a, b)", the column itself for a curve over
// one column (Delta Z-orders one column by sorting by it), and "" for
// bin-packing.
func (o *Optimize) SortOrder() string {
	if len(o.Columns) == 1 && o.Curve != "" {
		return o.Columns[0] // a curve over one column is a sort by it
	}
	switch o.Curve {
	case "zorder":
		return cluster.Order{Curve: cluster.CurveZOrder, Columns: o.Columns}.String()
	case "hilbert":
		return cluster.Order{Curve: cluster.CurveHilbert, Columns: o.Columns}.String()
	}
	return ""
}

// Command returns the statement's command: CommandCall, CommandVacuum,
// CommandOptimize or CommandAlter.
func (s Statement) Command() string {
	switch {
	case s.Alter != nil:
		return CommandAlter
	case s.Vacuum != nil:
		return CommandVacuum
	case s.Optimize != nil && s.Optimize.Purge:
		return CommandReorg
	case s.Optimize != nil:
		return CommandOptimize
	}
	return CommandCall
}

// vacuum reads the rest of a VACUUM statement on the table at loc.
func (p *parser) vacuum(loc string) (*Vacuum, error) {
	var err error
	v := &Vacuum{Location: loc}
	if p.tok.keyword("USING") {
		return nil, p.errAt(p.tok, "VACUUM … USING INVENTORY is not supported: geocompact lists the table location itself; leave the clause out")
	}
	if p.tok.keyword("RETAIN") {
		if v.Retain, err = p.retain(); err != nil {
			return nil, err
		}
		v.HasRetain = true
	}
	if p.tok.keyword("DRY") {
		if err := p.advance(); err != nil {
			return nil, err
		}
		if !p.tok.keyword("RUN") {
			return nil, p.unexpected("RUN after DRY")
		}
		v.DryRun = true
		return v, p.advance()
	}
	if p.tok.kind != tokSemi && p.tok.kind != tokEOF {
		return nil, p.unexpected(`RETAIN n HOURS, DRY RUN, ";" or the end of the script`)
	}
	return v, nil
}

// maxRetainHours keeps RETAIN's duration within time.Duration.
const maxRetainHours = float64(math.MaxInt64 / int64(time.Hour))

// retain reads RETAIN number HOURS.
func (p *parser) retain() (time.Duration, error) {
	if err := p.advance(); err != nil {
		return 0, err
	}
	n := p.tok
	if n.kind != tokNumber {
		return 0, p.unexpected("a number of hours after RETAIN, as in RETAIN 168 HOURS")
	}
	text := strings.TrimSuffix(strings.TrimSuffix(strings.ToUpper(n.text), "BD"), "D")
	text = strings.TrimRight(text, "LSYF")
	hours, err := strconv.ParseFloat(text, 64)
	switch {
	case err != nil:
		return 0, p.errAt(n, "RETAIN %s: want a number of hours", n.raw)
	case hours < 0:
		return 0, p.errAt(n, "RETAIN %s HOURS: the retention cannot be negative", n.raw)
	case hours > maxRetainHours:
		return 0, p.errAt(n, "RETAIN %s HOURS is too long: want at most %.0f hours", n.raw, maxRetainHours)
	}
	if err := p.advance(); err != nil {
		return 0, err
	}
	if !p.tok.keyword("HOURS") {
		return 0, p.unexpected("HOURS: RETAIN takes hours, as in RETAIN 168 HOURS")
	}
	return time.Duration(hours * float64(time.Hour)), p.advance()
}

// optimize reads the rest of an OPTIMIZE statement on the table at loc.
func (p *parser) optimize(loc string) (*Optimize, error) {
	var err error
	o := &Optimize{Location: loc}
	if p.tok.keyword("WHERE") {
		if err := p.predicate(o, "ZORDER", "HILBERT"); err != nil {
			return nil, err
		}
	}
	if p.tok.keyword("ZORDER") || p.tok.keyword("HILBERT") {
		o.Curve = strings.ToLower(p.tok.text)
		if o.Columns, err = p.curveColumns(); err != nil {
			return nil, err
		}
	}
	if p.tok.kind != tokSemi && p.tok.kind != tokEOF {
		return nil, p.unexpected(`WHERE, ZORDER BY (…), HILBERT BY (…), ";" or the end of the script`)
	}
	return o, nil
}

// reorg reads the rest of a REORG TABLE statement on the table at loc.
// Only APPLY (PURGE) is taken; Delta's APPLY (UPGRADE UNIFORM …) converts
// the table to another format's metadata, which geocompact does not
// write, and is refused by name.
func (p *parser) reorg(loc string) (*Optimize, error) {
	o := &Optimize{Location: loc, Purge: true}
	if p.tok.keyword("WHERE") {
		if err := p.predicate(o, "APPLY"); err != nil {
			return nil, err
		}
	}
	if !p.tok.keyword("APPLY") {
		return nil, p.unexpected("WHERE or APPLY (PURGE) after the table, as in REORG TABLE delta.`/path` APPLY (PURGE)")
	}
	if err := p.advance(); err != nil {
		return nil, err
	}
	if _, err := p.expect(tokLParen, `"(" after APPLY, as in APPLY (PURGE)`); err != nil {
		return nil, err
	}
	if p.tok.keyword("UPGRADE") {
		return nil, p.errAt(p.tok, "REORG TABLE … APPLY (UPGRADE UNIFORM …) is not supported: geocompact writes Delta and Iceberg tables as they are and converts neither; APPLY (PURGE) is")
	}
	if !p.tok.keyword("PURGE") {
		return nil, p.unexpected("PURGE, as in APPLY (PURGE)")
	}
	if err := p.advance(); err != nil {
		return nil, err
	}
	if _, err := p.expect(tokRParen, `")" after PURGE`); err != nil {
		return nil, err
	}
	if p.tok.kind != tokSemi && p.tok.kind != tokEOF {
		return nil, p.unexpected(`";" or the end of the script after APPLY (PURGE)`)
	}
	return o, nil
}

// deltaStatement reads a VACUUM, OPTIMIZE or REORG TABLE statement after
// its keyword kw into st.
func (p *parser) deltaStatement(st *Statement, kw string) error {
	if err := p.advance(); err != nil {
		return err
	}
	if kw == CommandReorg {
		if !p.tok.keyword("TABLE") {
			return p.unexpected("TABLE after REORG, as in REORG TABLE delta.`/path` APPLY (PURGE)")
		}
		if err := p.advance(); err != nil {
			return err
		}
		kw = "REORG TABLE"
	}
	loc, err := p.deltaTable(kw)
	if err != nil {
		return err
	}
	switch kw {
	case CommandVacuum:
		st.Vacuum, err = p.vacuum(loc)
	case CommandOptimize:
		st.Optimize, err = p.optimize(loc)
	default:
		st.Optimize, err = p.reorg(loc)
	}
	return err
}

// deltaTable reads the table of a Delta statement: delta.`location` or
// 'location'. Delta tables are reached by location only: geocompact keeps
// no metastore to look a name up in.
func (p *parser) deltaTable(cmd string) (string, error) {
	t := p.tok
	var loc string
	switch {
	case t.kind == tokString:
		loc = t.text
	case t.kind == tokIdent && strings.EqualFold(t.text, "delta") && !t.quoted:
		if err := p.advance(); err != nil {
			return "", err
		}
		if _, err := p.expect(tokDot, "\".\" after delta, as in delta.`/path/to/table`"); err != nil {
			return "", err
		}
		if !p.tok.quoted {
			return "", p.unexpected("a back-quoted location after delta., as in delta.`/path/to/table`")
		}
		t, loc = p.tok, p.tok.text
	case t.kind == tokIdent:
		return "", p.errAt(t, "%s %s: Delta tables are named by location, as in %s delta.`/path/to/table` or %s '/path/to/table'",
			cmd, t.describe(), cmd, cmd)
	default:
		return "", p.unexpected(fmt.Sprintf("a Delta table: delta.`/path/to/table` or '/path/to/table' after %s", cmd))
	}
	if strings.TrimSpace(loc) == "" {
		return "", p.errAt(t, "%s: empty table location", cmd)
	}
	return loc, p.advance()
}

// curveColumns reads BY (col, …) or BY col, … after ZORDER or HILBERT.
func (p *parser) curveColumns() ([]string, error) {
	kw := strings.ToUpper(p.tok.text)
	if err := p.advance(); err != nil {
		return nil, err
	}
	if !p.tok.keyword("BY") {
		return nil, p.unexpected("BY after " + kw)
	}
	if err := p.advance(); err != nil {
		return nil, err
	}
	paren := p.tok.kind == tokLParen
	if paren {
		if err := p.advance(); err != nil {
			return nil, err
		}
	}
	var cols []string
	for {
		start := p.tok
		col, err := p.columnName(kw)
		if err != nil {
			return nil, err
		}
		if slices.Contains(cols, col) {
			return nil, p.errAt(start, "%s BY: column %s is given twice", kw, col)
		}
		if len(cols) == cluster.MaxCurveDims {
			return nil, p.errAt(start, "%s BY takes at most %d columns: a curve key holds %d", kw, cluster.MaxCurveDims, cluster.MaxCurveDims)
		}
		cols = append(cols, col)
		if p.tok.kind != tokComma {
			break
		}
		if err := p.advance(); err != nil {
			return nil, err
		}
	}
	if paren {
		if _, err := p.expect(tokRParen, `"," or ")"`); err != nil {
			return nil, err
		}
	}
	return cols, nil
}

// columnName reads a column, a.b.c for a nested field.
func (p *parser) columnName(kw string) (string, error) {
	var parts []string
	for {
		t, err := p.expect(tokIdent, fmt.Sprintf("a column name in %s BY", kw))
		if err != nil {
			return "", err
		}
		if strings.Contains(t.text, ".") {
			return "", p.errAt(t, "column %s: a name holding a dot is not supported", t.describe())
		}
		parts = append(parts, t.text)
		if p.tok.kind != tokDot {
			return strings.Join(parts, "."), nil
		}
		if err := p.advance(); err != nil {
			return "", err
		}
	}
}
