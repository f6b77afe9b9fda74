package ingest

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/geocompact/geocompact/internal/remedy"
	"github.com/geocompact/geocompact/validate"
)

// ExtraColumnsError refuses a file with columns the table lacks, naming
// them and the two ways through.
type ExtraColumnsError struct {
	// File is the file's path ("" inside conform, which knows no path).
	File string
	// Columns are the file's columns the table lacks, in file order.
	Columns []string
}

var _ remedy.Carrier = (*ExtraColumnsError)(nil)

func (e *ExtraColumnsError) Error() string { return e.Say(remedy.Library) }

// Remedy is the two ways through: RemedyExtraColumns.
func (e *ExtraColumnsError) Remedy() remedy.Advice { return remedy.Advice{Kind: RemedyExtraColumns} }

// Say is the message with the two ways through worded by w.
func (e *ExtraColumnsError) Say(w remedy.Wording) string {
	quoted := make([]string, len(e.Columns))
	for i, c := range e.Columns {
		quoted[i] = fmt.Sprintf("%q", c)
	}
	what := "the file has"
	if e.File != "" {
		what = e.File + " has"
	}
	return fmt.Sprintf("%s columns the table lacks: %s (%s)", what, strings.Join(quoted, ", "), w(e.Remedy()))
}

// missingFrom returns the names of sc's fields that target lacks.
func missingFrom(sc, target *arrow.Schema) []string {
	var out []string
	for _, f := range sc.Fields() {
		if len(target.FieldIndices(f.Name)) == 0 {
			out = append(out, f.Name)
		}
	}
	return out
}

// extraColumns reads the footers of the files and returns the columns the
// table (target) lacks, each once, in the order first seen. Unless they
// are to be dropped or added, a file with any is refused before any data
// is read.
func (in *ingester) extraColumns(ctx context.Context, target *arrow.Schema, files []string) ([]arrow.Field, error) {
	var extra []arrow.Field
	seen := map[string]bool{}
	for _, path := range files {
		_, sc, err := validate.Inspect(ctx, path, validate.Config{Column: in.cfg.GeometryColumn})
		if sc == nil {
			return nil, err // validation has read these files, so this is rare
		}
		names := missingFrom(sc, target)
		if len(names) > 0 && !in.cfg.DropExtraColumns && !in.cfg.AddColumns {
			return nil, fmt.Errorf("ingest into %s refused, nothing was written: %w", in.dst.Name(), &ExtraColumnsError{File: path, Columns: names})
		}
		for _, n := range names {
			if !seen[n] {
				seen[n] = true
				extra = append(extra, sc.Field(sc.FieldIndices(n)[0]))
			}
		}
	}
	return extra, nil
}
