package alter

import (
	"context"
	"maps"
	"slices"

	"github.com/geocompact/geocompact/engine"
	format "github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/layouts"
)

// propertyTable is a format whose table keeps its layout and properties
// as properties of its own, by its own rules, and commits them itself:
// a Delta table's (table/deltatable).
type propertyTable interface {
	// PropertyRules are the format's rules for property keys and
	// values.
	PropertyRules() format.PropertyRules
	// SetProperties sets and unsets properties in one commit and
	// returns the version committed and the properties afterwards.
	SetProperties(ctx context.Context, set map[string]string, unset []string) (int64, map[string]string, error)
}

// applyProperties is Apply of t, whose format keeps its own properties.
func applyProperties(ctx context.Context, t format.Table, pt propertyTable, req Request) (*Result, error) {
	set, unset, err := stageProperties(t, pt, req)
	if err != nil {
		return nil, err
	}
	version, props, err := pt.SetProperties(ctx, set, unset)
	if err != nil {
		return nil, err
	}
	res := &Result{Table: t.Name, Set: set, Unset: unset, Version: &version}
	// Without a sort order the property is the layout's only record.
	res.Layout, _, err = layouts.FromProperties(t.Name, props)
	return res, err
}

// stageProperties checks req by the format's rules and the layout
// against t's columns and schema as a rewrite's plan does, and returns
// the properties to set and unset.
func stageProperties(t format.Table, pt propertyTable, req Request) (map[string]string, []string, error) {
	req, err := req.check(keyRules(pt.PropertyRules()))
	if err != nil {
		return nil, nil, err
	}
	set, unset := maps.Clone(req.Set), slices.Clone(req.Unset)
	if req.Unsorted && !slices.Contains(unset, layouts.Prop) {
		unset = append(unset, layouts.Prop)
	}
	if lay := req.layout; lay != nil {
		if !lay.prop {
			set[layouts.Prop] = lay.text()
		}
		if err := engine.CheckLayout(t, lay.order, lay.auto); err != nil {
			return nil, nil, err
		}
	}
	return set, unset, nil
}
