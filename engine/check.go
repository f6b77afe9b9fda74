package engine

import (
	"fmt"
	"maps"

	"github.com/geocompact/geocompact/cluster"
	"github.com/geocompact/geocompact/internal/remedy"
	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/table/optval"
)

// The fields of a Request a RequestError names.
const (
	FieldStrategy  = "strategy"
	FieldCurve     = "curve"
	FieldSortOrder = "sort order"
)

// Reasons a Request or a table refuses a layout for. Each carries its
// remedy (package remedy), which a front end words as its own settings;
// errors.Is matches them.
var (
	// ErrCurveAndSortOrder: a request names a curve and a sort order.
	ErrCurveAndSortOrder error = &remedy.Error{Advice: remedy.Advice{Kind: RemedyOneOrder}}
	// ErrBinPackSorts: a request names strategy binpack and an order.
	ErrBinPackSorts error = &remedy.Error{Facts: "strategy binpack does not sort", Sep: "; ", Advice: remedy.Advice{Kind: RemedyNoBinPack}}
	// ErrNoOrder: strategy sort on a table that records no order.
	ErrNoOrder error = &remedy.Error{Advice: remedy.Advice{Kind: RemedyGiveOrder}}
	// ErrNoWhere: a predicate on a table whose format cannot scope files.
	ErrNoWhere error = &remedy.Error{Advice: remedy.Advice{Kind: RemedyNoWhere}}
	// ErrAutoNoBoxes: curve auto on a group none of whose rows has a box.
	ErrAutoNoBoxes error = &remedy.Error{Facts: "no row has a bounding box to place", Sep: "; ", Advice: remedy.Advice{Kind: RemedyNotAuto}}
	// ErrAutoDistributed refuses curve auto in a distributed rewrite. It
	// wraps optval.ErrBad.
	ErrAutoDistributed error = &remedy.Error{Err: optval.ErrBad, Advice: remedy.Advice{Kind: RemedyFixedCurve}}
	// ErrNameGeometry: a layout needs the rows' boxes and the table has
	// neither bbox columns nor a known geometry column.
	ErrNameGeometry error = &remedy.Error{Facts: "no geometry column was found either",
		Advice: remedy.Advice{Kind: RemedyNameGeometry, Name: spatial.PropGeometryColumn}}
)

// What a user can do about the errors above and GeometryError, in the
// library's words; a front end words each as its own settings.
var (
	// RemedyOneOrder: give a curve or a sort order, not both.
	RemedyOneOrder = remedy.Define("engine.one-order", func(remedy.Advice) string {
		return "give a curve or a sort order, not both"
	})
	// RemedyNoBinPack: drop strategy binpack to sort.
	RemedyNoBinPack = remedy.Define("engine.no-binpack", func(remedy.Advice) string {
		return "drop strategy binpack to use the sort order"
	})
	// RemedyGiveOrder: give a curve or a sort order.
	RemedyGiveOrder = remedy.Define("engine.give-order", func(remedy.Advice) string {
		return "give a curve (hilbert, zorder or linear) or a sort order"
	})
	// RemedyNoWhere: leave the where predicate out; it is not available.
	RemedyNoWhere = remedy.Define("engine.no-where", func(remedy.Advice) string {
		return "a where predicate is not available"
	})
	// RemedyNotAuto: give a curve or a sort order in place of curve auto.
	RemedyNotAuto = remedy.Define("engine.not-auto", func(remedy.Advice) string {
		return "give a curve or a sort order"
	})
	// RemedyFixedCurve: choose the curve by a local dry run with curve
	// auto, then request it.
	RemedyFixedCurve = remedy.Define("engine.fixed-curve", func(remedy.Advice) string {
		return "curve auto is chosen per group by a local rewrite; a distributed rewrite needs a fixed layout: " +
			"a local dry run with curve auto shows the choice, then request that curve"
	})
	// RemedyNameGeometry: name the WKB column by the table property Name.
	RemedyNameGeometry = remedy.Define("engine.name-geometry", func(a remedy.Advice) string {
		return "name the WKB column with the table property " + a.Name
	})
	// RemedyValidate: validate table Table, or turn off the option Name
	// (validate-geometry) to compact it as it is.
	RemedyValidate = remedy.Define("engine.validate", func(a remedy.Advice) string {
		return fmt.Sprintf("validate table %s, or set option %s=false to compact it as it is", a.Table, a.Name)
	})
)

// RequestError is a value of a Request that does not parse, or values that
// do not fit together: Field names the one at fault (FieldStrategy,
// FieldCurve, FieldSortOrder; "" for a combination), Value its value. It
// wraps optval.ErrBad and Err, the reason.
type RequestError struct {
	Field, Value string
	Err          error
}

func (e *RequestError) Error() string { return fmt.Sprintf("%v: %v", optval.ErrBad, e.Err) }

// Unwrap returns optval.ErrBad and the reason.
func (e *RequestError) Unwrap() []error { return []error{optval.ErrBad, e.Err} }

// requestLayout is the layout a request names, parsed.
type requestLayout struct {
	strategy Strategy
	order    cluster.Order
	// auto is set for the automatic choice (cluster.CurveAuto).
	auto bool
	// given is set when the request names a curve or a sort order.
	given bool
}

// checked is what Check parsed of a request.
type checked struct {
	layout requestLayout
	// opts are the request's options over the defaults, before a table's
	// properties apply (see Request.OptionsFor); given holds the names the
	// request sets.
	opts  Options
	given map[string]string
}

// Check parses and checks the request's own values, each once: the
// strategy, the curve or sort order and how they fit together, and the
// names and values of its options (before a table's defaults apply). It
// returns the request carrying what it parsed, which a rewrite then uses
// as it is; Rewrite checks a request that was not. A bad value is a
// *RequestError, a bad option an optval error; both wrap optval.ErrBad.
func (r Request) Check() (Request, error) {
	if r.checked != nil {
		return r, nil
	}
	opts, err := parseOptions(r.Options)
	if err != nil {
		return r, err
	}
	l, err := r.parseLayout()
	if err != nil {
		return r, err
	}
	r.checked = &checked{layout: l, opts: opts, given: maps.Clone(r.Options)}
	return r, nil
}

// BinPacks reports whether r asks for a bin-pack: no sort strategy, curve
// or sort order (false for a request that does not parse).
func (r Request) BinPacks() bool {
	l, err := r.layout()
	return err == nil && l.strategy != Sort && !l.given
}

// layout is the layout r names: as Check parsed it, else parsed now.
func (r Request) layout() (requestLayout, error) {
	if r.checked != nil {
		return r.checked.layout, nil
	}
	return r.parseLayout()
}

// parseLayout parses the strategy, curve and sort order of r. A curve or a
// sort order implies the sort strategy.
func (r Request) parseLayout() (requestLayout, error) {
	l := requestLayout{strategy: r.Strategy}
	if r.Strategy != "" && r.Strategy != BinPack && r.Strategy != Sort {
		return l, &RequestError{Field: FieldStrategy, Value: string(r.Strategy), Err: fmt.Errorf("strategy %q: want binpack or sort", r.Strategy)}
	}
	if r.Curve != "" && r.SortOrder != "" {
		return l, &RequestError{Err: ErrCurveAndSortOrder}
	}
	if (r.Curve != "" || r.SortOrder != "") && r.Strategy == BinPack {
		return l, &RequestError{Field: FieldStrategy, Value: string(r.Strategy),
			Err: ErrBinPackSorts}
	}
	var err error
	switch {
	case r.Curve != "":
		if l.order, l.auto, err = cluster.ParseCurve(r.Curve); err != nil {
			return l, &RequestError{Field: FieldCurve, Value: r.Curve, Err: err}
		}
	case r.SortOrder != "":
		if l.order, err = cluster.ParseOrder(r.SortOrder); err != nil {
			return l, &RequestError{Field: FieldSortOrder, Value: r.SortOrder, Err: err}
		}
	default:
		return l, nil
	}
	l.strategy, l.given = Sort, true
	return l, nil
}
