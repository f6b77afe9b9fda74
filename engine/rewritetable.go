package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/geocompact/geocompact/cluster"
	"github.com/geocompact/geocompact/table/layouts"
)

// FormatTable is a table of another format than Iceberg, at one version,
// as RewriteTable plans and rewrites it.
type FormatTable struct {
	// Name names the table in messages (a Delta table's location).
	Name string
	// FormatName is the Result.Format of the table's rewrites:
	// FormatDelta for a Delta table.
	FormatName string
	// Properties are the table's properties: rewrite options default
	// from them as from an Iceberg table's, and layouts.Prop records its
	// layout.
	Properties map[string]string
	// Columns are the table's top-level columns, and Schema the Arrow
	// schema its rows are read with.
	Columns []string
	Schema  *arrow.Schema
	// Files are the table's live files at the version, each with the
	// format's own description in PlanFile.File.
	Files []PlanFile
	// Format reads, writes and commits the table's files.
	Format Format
	// Scope, when set, returns the files of Files a Request.Where
	// selects (whole files, as for an Iceberg table); without it a
	// request with Where is refused.
	Scope func(files []PlanFile, where string) ([]PlanFile, error)
}

// RewriteTable compacts a table of another format as Rewrite compacts an
// Iceberg table: the same options, plan, layouts (the table's recorded
// layout, a curve, a sort order, auto), sorts in memory or spilled,
// validation and verification; only reading, writing and committing go
// through t.Format; t.Scope scopes a rewrite by Request.Where.
func RewriteTable(ctx context.Context, t FormatTable, cfg Request) (*Result, error) {
	start := time.Now()
	r, lt, err := newTableRewriter(t, cfg)
	if err != nil {
		return nil, err
	}
	res, err := r.planTable(ctx, t, lt)
	if err == nil && len(res.Plan.Groups) > 0 {
		res, err = r.execute(ctx, res, t.Format)
	}
	if res != nil {
		res.Format, res.Duration = t.FormatName, time.Since(start)
	}
	return res, err
}

// newTableRewriter checks cfg against t.
func newTableRewriter(t FormatTable, cfg Request) (*rewriter, layoutTable, error) {
	if cfg.Where != "" && t.Scope == nil {
		return nil, layoutTable{}, fmt.Errorf("%w: --where is not available for table %s: rewrite it whole, or scope the rewrite with max-files-to-rewrite", ErrOption, t.Name)
	}
	opts, err := ParseOptions(cfg.Options, t.Properties)
	if err != nil {
		return nil, layoutTable{}, err
	}
	lt := t.layoutTable()
	if lt.recorded, _, err = layouts.FromProperties(t.Name, t.Properties); err != nil {
		return nil, lt, err
	}
	lay, err := lt.resolve(cfg, opts)
	if err != nil {
		return nil, lt, err
	}
	return &rewriter{name: t.Name, cfg: cfg, opts: opts, lay: lay, log: cfg.logger().With("table", t.Name)}, lt, nil
}

// layoutTable describes t for choosing and checking a layout.
func (t FormatTable) layoutTable() layoutTable {
	lt := layoutTable{name: t.Name, columns: t.Columns, schema: t.Schema}
	if cols, _, err := t.Format.Spatial(); err == nil {
		lt.geometry = cols.Geometry
	}
	return lt
}

// CheckTableLayout fails when layout o (auto: the automatic choice)
// cannot order t's rows, as a rewrite's plan would: a column t does not
// hold, a curve over one dimension. It is CheckLayoutColumns for a table
// of another format.
func CheckTableLayout(t FormatTable, o cluster.Order, auto bool) error {
	lt := t.layoutTable()
	if err := lt.checkOrderColumns(o, auto); err != nil {
		return err
	}
	return lt.checkOrder(layout{strategy: Sort, order: o, auto: auto})
}

// planTable plans the rewrite of t's files. A result with no groups says
// why in NoopReason.
func (r *rewriter) planTable(ctx context.Context, t FormatTable, lt layoutTable) (*Result, error) {
	if err := lt.checkLayoutChange(r.lay, r.cfg); err != nil {
		return nil, err
	}
	res := r.newResult()
	for _, f := range t.Files {
		res.FilesBefore++
		res.BytesBefore += f.Size
	}
	res.FilesAfter, res.BytesAfter = res.FilesBefore, res.BytesBefore
	if len(t.Files) == 0 {
		res.NoopReason = "the table has no data files: there is nothing to rewrite"
		return res, nil
	}
	selected := t.Files
	if r.cfg.Where != "" {
		var err error
		if selected, err = t.Scope(t.Files, r.cfg.Where); err != nil {
			return nil, err
		}
	}
	if err := r.planSelected(ctx, res, t.Format, selected, len(t.Files)); err != nil {
		return nil, err
	}
	return res, nil
}
