// Package layouts names a table's layout and where it is recorded: the
// canonical text of an order (curve names are cluster's registry), the table property
// geocompact.layout, and the
// error a rewrite returns when it would replace a recorded layout. It is
// a leaf of the engine: alter, maintain and the commands use it as the
// rewrite does.
package layouts

import (
	"errors"
	"fmt"
	"strings"

	"github.com/geocompact/geocompact/cluster"
	"github.com/geocompact/geocompact/internal/remedy"
	"github.com/geocompact/geocompact/table/optval"
)

// Prop is the table property that records a table's layout when
// Iceberg's sort-order spec cannot express it: a space-filling curve, STR,
// the automatic choice, or a linear order over columns the table does not
// hold (the bbox columns of a table with only a geometry column). Its
// value is "auto" or a sort order in the canonical form cluster.ParseOrder
// reads ("hilbert()", "zorder(bbox_minx, bbox_miny)", "str()"); a curve
// name as --curve spells it ("hilbert") is read too. A plain column order
// is recorded as the table's Iceberg sort order instead, so that other
// engines honour it; the property wins when both are set.
const Prop = "geocompact.layout"

// Record is the layout a table records, as a rewrite without
// --strategy, --curve or --sort-order applies it.
type Record struct {
	// Text is "auto" or the order in canonical form; "" when the table
	// records no layout (a rewrite bin-packs).
	Text string `json:"layout"`
	// Source is FromProperty or FromSortOrder ("" for none).
	Source string `json:"source"`
}

// FromProperties returns the layout the table property Prop
// records, and whether it records one.
func FromProperties(table string, props map[string]string) (Record, bool, error) {
	v := strings.TrimSpace(props[Prop])
	if v == "" {
		return Record{}, false, nil
	}
	o, auto, err := Parse(v)
	if err != nil {
		return Record{}, false, &PropertyError{Table: table, Value: v, Err: err}
	}
	return Record{Text: Text(o, auto), Source: FromProperty}, true, nil
}

// Parse parses a recorded layout: "auto" (reported as auto), a
// curve name (cluster.CurveNames), or a sort order cluster.ParseOrder
// reads.
func Parse(s string) (o cluster.Order, auto bool, err error) {
	if _, err := cluster.LookupCurve(s); err == nil {
		return cluster.ParseCurve(s)
	}
	o, err = cluster.ParseOrder(s)
	return o, false, err
}

// Text is the canonical text of a layout: "auto" or o.String(),
// as Prop records it.
func Text(o cluster.Order, auto bool) string {
	if auto {
		return cluster.CurveAuto
	}
	return o.String()
}

// OrderColumns lists the columns an order names; empty for a curve over
// the rows' position.
func OrderColumns(o cluster.Order) []string {
	if o.Curve != cluster.CurveLinear {
		return o.Columns
	}
	cols := make([]string, len(o.Fields))
	for i, f := range o.Fields {
		cols[i] = f.Column
	}
	return cols
}

// Where a rewrite's layout came from, as Result.LayoutSource says.
const (
	FromRequest   = "request"
	FromProperty  = "table property " + Prop
	FromSortOrder = "table sort order"
	FromDefault   = "default"
)

// ErrChange marks a rewrite that would replace the layout a table
// records with a different one without Request.AllowLayoutChange.
var ErrChange = errors.New("engine: layout change")

// ChangeError says which recorded layout a rewrite would replace,
// and with what.
type ChangeError struct {
	Table string
	// Recorded is the table's layout and Source where it is recorded.
	Recorded, Source string
	// Requested is the layout the rewrite asked for ("binpack" for none).
	Requested string
}

var (
	_ remedy.Carrier = (*ChangeError)(nil)
	_ remedy.Carrier = (*PropertyError)(nil)
)

func (e *ChangeError) Error() string { return e.Say(remedy.Library) }

// Remedy is to keep the layout, allow the change or record the new layout
// on the table (RemedyChange).
func (e *ChangeError) Remedy() remedy.Advice {
	return remedy.Advice{Kind: RemedyChange, Table: e.Table}
}

// Say returns the message with the remedy worded by w.
func (e *ChangeError) Say(w remedy.Wording) string { return e.Facts() + ": " + w(e.Remedy()) }

// Facts says what the rewrite would change, without advice.
func (e *ChangeError) Facts() string {
	return fmt.Sprintf("table %s is laid out by %s (%s); this rewrite would lay it out by %s instead and lose that clustering",
		e.Table, e.Recorded, e.Source, e.Requested)
}

// PropertyError is a Prop value that does not parse. It wraps
// optval.ErrBad and Err, the reason.
type PropertyError struct {
	Table, Value string
	Err          error
}

func (e *PropertyError) Error() string { return e.Say(remedy.Library) }

// Remedy is to record a layout on the table or remove Prop
// (RemedyProperty).
func (e *PropertyError) Remedy() remedy.Advice {
	return remedy.Advice{Kind: RemedyProperty, Table: e.Table, Name: Prop}
}

// Say returns the message with the remedy worded by w.
func (e *PropertyError) Say(w remedy.Wording) string { return e.Facts() + "; " + w(e.Remedy()) }

// What a user can do about a ChangeError and a PropertyError, in the
// library's words.
var (
	// RemedyChange: keep the layout of table Table, allow the change, or
	// record the new layout.
	RemedyChange = remedy.Define("layouts.change", func(a remedy.Advice) string {
		return "request no layout to keep the table's layout, allow the layout change to rewrite it anyway, " +
			"or record the new layout on table " + a.Table
	})
	// RemedyProperty: record a layout on table Table, or remove the
	// property Name (Prop).
	RemedyProperty = remedy.Define("layouts.property", func(a remedy.Advice) string {
		return "record a layout on the table, or remove property " + a.Name
	})
)

// Facts says which value is wrong and why, without advice.
func (e *PropertyError) Facts() string {
	return fmt.Sprintf("%v: table %s: property %s=%q: %v", optval.ErrBad, e.Table, Prop, e.Value, e.Err)
}

// Unwrap returns optval.ErrBad and the reason.
func (e *PropertyError) Unwrap() []error { return []error{optval.ErrBad, e.Err} }

// Unwrap returns ErrChange.
func (e *ChangeError) Unwrap() error { return ErrChange }
