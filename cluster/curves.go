package cluster

import (
	"fmt"
	"slices"
	"strings"

	"github.com/geocompact/geocompact/internal/suggest"
	"github.com/geocompact/geocompact/spatial"
)

// CurveAuto is the name of the automatic choice: each group is laid out
// by the candidate (AutoCandidates) that Choose predicts plans the fewest
// files. It names no single order.
const CurveAuto = "auto"

// CurveInfo is one entry of the registry of layout names (Curves): a
// curve a request names, or the automatic choice among them.
type CurveInfo struct {
	// Name is the name, lower case, as a request, a recorded layout and
	// ParseOrder's function form ("hilbert(a, b)") spell it.
	Name string
	// Aliases are other spellings read as Name (none yet).
	Aliases []string
	// Curve is the curve; Auto entries have none.
	Curve Curve
	// Auto marks the automatic choice.
	Auto bool
	// Candidate marks a curve Choose weighs when given no candidates.
	Candidate bool
	// Benched marks a layout bench measures when no layouts are named:
	// str lies close to linear and auto picks among the others, so they
	// are measured on request.
	Benched bool
	// Windows marks a layout shaped by query windows: kd costs its splits
	// for them, auto chooses by them.
	Windows bool
	// Function is set when ParseOrder reads the curve as a function of
	// columns, name(col, ...); MaxColumns is the most it takes.
	Function   bool
	MaxColumns int
	// Description says in a few words what the layout is ("" when its
	// name says it), for help texts.
	Description string
}

// curves is the registry: every layout name, in the order names are
// listed, suggested and (for candidates) tie-broken by Choose.
var curves = []CurveInfo{
	{Name: "linear", Curve: CurveLinear, Candidate: true, Benched: true},
	{Name: "zorder", Curve: CurveZOrder, Candidate: true, Benched: true, Function: true, MaxColumns: MaxCurveDims},
	{Name: "hilbert", Curve: CurveHilbert, Candidate: true, Benched: true, Function: true, MaxColumns: MaxCurveDims},
	{Name: "str", Curve: CurveSTR, Candidate: true, Function: true, MaxColumns: 1,
		Description: "sort-tile-recursive"},
	{Name: "kd", Curve: CurveKD, Candidate: true, Benched: true, Windows: true, Function: true, MaxColumns: 1,
		Description: "a k-d tree of files split by cost"},
	{Name: CurveAuto, Auto: true, Windows: true, Description: "chosen per group by estimate"},
}

// Curves returns the registry of layout names, in listing order: the
// curves, then auto.
func Curves() []CurveInfo { return slices.Clone(curves) }

// CurveNames returns every layout name a request accepts, in listing
// order: linear, zorder, hilbert, str, kd, auto.
func CurveNames() []string { return curveNames(func(CurveInfo) bool { return true }) }

// OrderNames returns the names CurveOrder accepts: every curve, not auto.
func OrderNames() []string { return curveNames(func(c CurveInfo) bool { return !c.Auto }) }

// AutoCandidates returns the curves Choose weighs by default, in the
// order that breaks ties.
func AutoCandidates() []string { return curveNames(func(c CurveInfo) bool { return c.Candidate }) }

// BenchedCurves returns the curves bench measures when no layouts are
// named, and OtherCurves the rest of the names, each in listing order.
func BenchedCurves() []string { return curveNames(func(c CurveInfo) bool { return c.Benched }) }

// OtherCurves: see BenchedCurves.
func OtherCurves() []string { return curveNames(func(c CurveInfo) bool { return !c.Benched }) }

func curveNames(keep func(CurveInfo) bool) []string {
	var names []string
	for _, c := range curves {
		if keep(c) {
			names = append(names, c.Name)
		}
	}
	return names
}

// LookupCurve returns the registry entry of name (case-insensitive,
// aliases included). An unknown name is an error wrapping ErrSortOrder
// that lists the names and suggests the closest.
func LookupCurve(name string) (CurveInfo, error) {
	if c, ok := lookupCurve(name); ok {
		return c, nil
	}
	return CurveInfo{}, unknownCurve(name, CurveNames())
}

func lookupCurve(name string) (CurveInfo, bool) {
	n := strings.ToLower(strings.TrimSpace(name))
	for _, c := range curves {
		if c.Name == n || slices.Contains(c.Aliases, n) {
			return c, true
		}
	}
	return CurveInfo{}, false
}

// functionCurve returns the curve a function name of ParseOrder
// (case-insensitive) stands for.
func functionCurve(name string) (Curve, bool) {
	c, ok := lookupCurve(name)
	return c.Curve, ok && c.Function
}

func unknownCurve(name string, names []string) error {
	return fmt.Errorf("%w: unknown curve %q (want %s or %s)%s", ErrSortOrder, name,
		strings.Join(names[:len(names)-1], ", "), names[len(names)-1],
		suggest.Hint(strings.ToLower(strings.TrimSpace(name)), names))
}

// ParseCurve parses a layout name, one of CurveNames (case-insensitive):
// auto reports true and no order; a curve its order (see CurveOrder). An
// unknown name is an error wrapping ErrSortOrder that lists the names and
// suggests the closest.
func ParseCurve(name string) (Order, bool, error) {
	c, err := LookupCurve(name)
	if err != nil || c.Auto {
		return Order{}, c.Auto, err
	}
	return c.order(), false, nil
}

// CurveOrder returns the order a curve name stands for: "linear" is
// "bbox_minx ASC NULLS LAST, bbox_miny ASC NULLS LAST"; the others are the
// curve over the row's spatial position, "zorder()", "hilbert()", "str()"
// and "kd()". Names are case-insensitive; auto, which is no single order,
// is refused as an unknown name is. On a schema without bbox columns, a
// Sorter reads the linear order's bbox_minx and bbox_miny from the
// lower-left corner of the covering or geometry column's boxes.
func CurveOrder(name string) (Order, error) {
	c, ok := lookupCurve(name)
	if !ok || c.Auto {
		return Order{}, unknownCurve(name, OrderNames())
	}
	return c.order(), nil
}

func (c CurveInfo) order() Order {
	if c.Curve != CurveLinear {
		return Order{Curve: c.Curve}
	}
	return Order{Curve: CurveLinear, Fields: []Field{
		{Column: spatial.BBoxColumns[0], Direction: Asc, Nulls: NullsLast},
		{Column: spatial.BBoxColumns[1], Direction: Asc, Nulls: NullsLast},
	}}
}

// String returns the curve's name as the registry spells it.
func (c Curve) String() string {
	for _, e := range curves {
		if !e.Auto && e.Curve == c {
			return e.Name
		}
	}
	return fmt.Sprintf("Curve(%d)", int(c))
}

// curveArgs is the most columns curve c takes as a function: str and kd
// run over one spatial column, the others over up to MaxCurveDims.
func curveArgs(c Curve) int {
	for _, e := range curves {
		if e.Function && e.Curve == c {
			return e.MaxColumns
		}
	}
	return 0
}

func isFunction(name string) bool {
	_, ok := functionCurve(name)
	return ok
}
