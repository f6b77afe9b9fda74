package alter

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/table/deltatable"
	"github.com/geocompact/geocompact/table/layouts"
)

// ErrDeltaTarget refuses Iceberg's target file size property on a Delta
// table.
var ErrDeltaTarget = errors.New("a Delta table's target file size is " + delta.PropTargetFileSize +
	", which other Delta writers honour too: set it instead")

// deltaRules are the property rules of a Delta table: its own delta.*
// properties as delta.CheckProperty allows them, delta.targetFileSize
// taking units, and the target file size by Delta's name only.
var deltaRules = keyRules{
	known:  append([]string{layouts.Prop}, delta.SettableProperties...),
	isSize: func(k string) bool { return k == delta.PropTargetFileSize },
	check: func(k, v string, unset bool) error {
		if k == table.PropTargetFileSize {
			return ErrDeltaTarget
		}
		return delta.CheckProperty(k, v, unset)
	},
}

// CheckDelta is Check for a Delta table: the delta.* properties other
// than those delta.CheckProperty allows are refused (changing most needs
// a protocol upgrade), and the target file size is delta.targetFileSize.
func (r Request) CheckDelta() (Request, error) { return r.check(deltaRules) }

// ApplyDelta records the request's layout and properties on the Delta
// table at location in one commit (delta.Table.SetProperties): Delta has
// no sort order, so any layout is kept in layouts.Prop, checked
// first against the table's columns as a rewrite checks it, and Unsorted
// removes layouts.Prop. Properties go into the table's configuration. A
// concurrent change of the table's metadata fails with
// catalogs.ErrConflict, committing nothing; a concurrent append is not a
// conflict.
func ApplyDelta(ctx context.Context, location string, req Request, commitAttempts int) (*Result, error) {
	t, set, unset, err := stageDelta(ctx, location, req)
	if err != nil {
		return nil, err
	}
	if commitAttempts <= 0 {
		commitAttempts = 5
	}
	pc, err := t.SetProperties(ctx, set, unset, commitAttempts)
	if err != nil {
		var ce *delta.ConflictError
		if errors.As(err, &ce) {
			return nil, fmt.Errorf("%w: alter %s: %w; nothing was committed, run alter again", catalogs.ErrConflict, location, err)
		}
		return nil, fmt.Errorf("alter %s: %w", location, err)
	}
	res := &Result{Table: location, Set: set, Unset: unset, Version: &pc.Version}
	// A Delta table has no sort order: the property is its only record.
	res.Layout, _, err = layouts.FromProperties(location, pc.Configuration)
	return res, err
}

// ValidateDelta checks the request against the Delta table at location
// as ApplyDelta does and commits nothing.
func ValidateDelta(ctx context.Context, location string, req Request) error {
	_, _, _, err := stageDelta(ctx, location, req)
	return err
}

// stageDelta checks req, opens the table and returns the properties to
// set and unset.
func stageDelta(ctx context.Context, location string, req Request) (*delta.Table, map[string]string, []string, error) {
	req, err := req.CheckDelta()
	if err != nil {
		return nil, nil, nil, err
	}
	t, err := delta.Open(ctx, location)
	if err != nil {
		return nil, nil, nil, err
	}
	set, unset := maps.Clone(req.Set), slices.Clone(req.Unset)
	if req.Unsorted && !slices.Contains(unset, layouts.Prop) {
		unset = append(unset, layouts.Prop)
	}
	if lay := req.layout; lay != nil {
		if !lay.prop {
			set[layouts.Prop] = lay.text()
		}
		if err := checkDeltaLayout(ctx, t, location, lay); err != nil {
			return nil, nil, nil, err
		}
	}
	return t, set, unset, nil
}

// checkDeltaLayout checks a layout against the Delta table's columns and
// schema as a rewrite's plan does.
func checkDeltaLayout(ctx context.Context, t *delta.Table, location string, lay *layout) error {
	ft, err := deltatable.Open(ctx, t, location, true)
	if err != nil {
		return err
	}
	return engine.CheckLayout(ft, lay.order, lay.auto)
}
