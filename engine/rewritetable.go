package engine

import (
	"context"
	"fmt"
	"time"
)

// FormatTable is a table of another format than Iceberg, at one version,
// as RewriteTable plans and rewrites it.
type FormatTable struct {
	// Name names the table in messages (a Delta table's location).
	Name string
	// Properties are the table's properties: rewrite options default
	// from them as from an Iceberg table's, and PropLayout records its
	// layout.
	Properties map[string]string
	// Columns are the table's top-level columns.
	Columns []string
	// Files are the table's live files at the version, each with the
	// format's own description in PlanFile.File.
	Files []PlanFile
	// Format reads, writes and commits the table's files.
	Format Format
}

// RewriteTable compacts a table of another format as Rewrite compacts an
// Iceberg table: the same options, plan, layouts (the table's recorded
// layout, a curve, a sort order, auto), sorts in memory or spilled,
// validation and verification; only reading, writing and committing go
// through t.Format. A request with Where fails: scoping a rewrite by a
// predicate is not available for these tables yet.
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
		res.Duration = time.Since(start)
	}
	return res, err
}

// newTableRewriter checks cfg against t.
func newTableRewriter(t FormatTable, cfg Request) (*rewriter, layoutTable, error) {
	if cfg.Where != "" {
		return nil, layoutTable{}, fmt.Errorf("%w: --where is not available for table %s: rewrite it whole, or scope the rewrite with max-files-to-rewrite", ErrOption, t.Name)
	}
	opts, err := ParseOptions(cfg.Options, t.Properties)
	if err != nil {
		return nil, layoutTable{}, err
	}
	lt := layoutTable{name: t.Name, columns: t.Columns}
	if cols, _, err := t.Format.Spatial(); err == nil {
		lt.geometry = cols.Geometry
	}
	if lt.recorded, _, err = propertyLayout(t.Name, t.Properties); err != nil {
		return nil, lt, err
	}
	lay, err := lt.resolve(cfg, opts)
	if err != nil {
		return nil, lt, err
	}
	return &rewriter{name: t.Name, cfg: cfg, opts: opts, lay: lay, log: cfg.logger().With("table", t.Name)}, lt, nil
}

// planTable plans the rewrite of t's files. A result with no groups says
// why in NoopReason.
func (r *rewriter) planTable(ctx context.Context, t FormatTable, lt layoutTable) (*Result, error) {
	if err := lt.checkLayoutChange(r.lay, r.cfg); err != nil {
		return nil, err
	}
	res := &Result{Strategy: string(r.lay.strategy), SortOrder: r.lay.orderText, LayoutSource: r.lay.source, DryRun: r.cfg.DryRun, Plan: &Plan{}}
	for _, f := range t.Files {
		res.FilesBefore++
		res.BytesBefore += f.Size
	}
	res.FilesAfter, res.BytesAfter = res.FilesBefore, res.BytesBefore
	if len(t.Files) == 0 {
		res.NoopReason = "the table has no data files: there is nothing to rewrite"
		return res, nil
	}
	opts := r.opts
	opts.clustered = r.lay.spatial()
	res.Plan = opts.Plan(t.Files)
	if len(res.Plan.Groups) == 0 {
		res.NoopReason = res.Plan.Hint
		return res, nil
	}
	if r.lay.auto {
		var err error
		if r.auto, err = r.chooseLayouts(ctx, t.Format, res.Plan); err != nil {
			return nil, err
		}
		res.Auto = r.auto
		r.lay.orderText = autoText(r.auto)
		res.SortOrder = r.lay.orderText
	}
	return res, nil
}
