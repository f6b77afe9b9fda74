package deltatable

import (
	"context"
	"errors"
	"fmt"

	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/internal/remedy"
	"github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/table/layouts"
)

// ErrTargetFileSize refuses Iceberg's target file size property on a
// Delta table.
var ErrTargetFileSize error = &remedy.Error{
	Facts:  "a Delta table's target file size is " + delta.PropTargetFileSize + ", which other Delta writers honour too",
	Advice: remedy.Advice{Kind: RemedyDeltaTargetSize, Name: delta.PropTargetFileSize},
}

// RemedyDeltaTargetSize: set the property Name, Delta's own target file
// size, instead.
var RemedyDeltaTargetSize = remedy.Define("deltatable.target-size", func(remedy.Advice) string { return "set it instead" })

// propertyRules are the property rules of a Delta table: its own delta.*
// properties as delta.CheckProperty allows them (changing most needs a
// protocol upgrade), delta.targetFileSize taking units, and the target
// file size by Delta's name only.
var propertyRules = table.PropertyRules{
	Known:  append([]string{layouts.Prop}, delta.SettableProperties...),
	IsSize: func(k string) bool { return k == delta.PropTargetFileSize },
	Check: func(k, v string, unset bool) error {
		if k == table.PropTargetFileSize {
			return ErrTargetFileSize
		}
		return delta.CheckProperty(k, v, unset)
	},
}

// PropertyRules are the rules alter checks a Delta table's properties
// by. A Delta table has no sort order: any layout is recorded in
// layouts.Prop.
func (f *format) PropertyRules() table.PropertyRules { return propertyRules }

// propertyAttempts is how many times SetProperties commits before it
// gives up on a table other writers keep changing.
const propertyAttempts = 5

// SetProperties sets and unsets the table's properties in one commit
// (delta.Table.SetProperties) and returns the version committed and the
// properties afterwards. A concurrent change of the table's metadata
// fails with catalogs.ErrConflict, committing nothing; a concurrent
// append is not a conflict.
func (f *format) SetProperties(ctx context.Context, set map[string]string, unset []string) (int64, map[string]string, error) {
	pc, err := f.t.SetProperties(ctx, set, unset, propertyAttempts)
	if err != nil {
		var ce *delta.ConflictError
		if errors.As(err, &ce) {
			return 0, nil, fmt.Errorf("%w: alter %s: %w; nothing was committed, run alter again", catalogs.ErrConflict, f.name, err)
		}
		return 0, nil, fmt.Errorf("alter %s: %w", f.name, err)
	}
	return pc.Version, pc.Configuration, nil
}
