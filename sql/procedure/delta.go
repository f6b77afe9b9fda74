package procedure

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/internal/remedy"
	"github.com/geocompact/geocompact/sql"
	"github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/deltatable"
)

// vacuumColumns is the result column of Delta's VACUUM: the files a dry
// run would delete, or the table's location after a real run.
var vacuumColumns = []string{"path"}

// prepareDelta opens the Delta table of a VACUUM, OPTIMIZE or REORG TABLE
// statement
// and checks what can be checked before anything runs.
func (s *Script) prepareDelta(ctx context.Context, st sql.Statement) (*step, error) {
	loc := deltaLocation(st)
	tbl, err := delta.Open(ctx, loc)
	if err != nil {
		return nil, fmt.Errorf("open Delta table %s: %w", loc, err)
	}
	stp := &step{call: sql.Call{Statement: st}, delta: tbl}
	if st.Optimize != nil {
		stp.optimize, err = s.prepareOptimize(ctx, tbl, st.Optimize)
		return stp, err
	}
	if _, err := tbl.CheckVacuum(ctx, s.vacuumConfig(st.Vacuum)); err != nil {
		return nil, vacuumError(st.Vacuum, err)
	}
	return stp, nil
}

func deltaLocation(st sql.Statement) string {
	if st.Vacuum != nil {
		return st.Vacuum.Location
	}
	return st.Optimize.Location
}

func (s *Script) vacuumConfig(v *sql.Vacuum) delta.VacuumConfig {
	cfg := delta.VacuumConfig{Retain: delta.TableRetention, Force: s.opts.Force, DryRun: v.DryRun || s.opts.DryRun}
	if v.HasRetain {
		cfg.Retain = v.Retain
	}
	return cfg
}

// vacuumError words a retention below the table's floor in the
// statement's own terms, as a mistake in the call (ErrCall).
func vacuumError(v *sql.Vacuum, err error) error {
	re, ok := errors.AsType[*delta.RetentionError](err)
	if !ok {
		return fmt.Errorf("VACUUM %s: %w", v.Location, err)
	}
	return &remedy.Error{Err: ErrCall, Facts: fmt.Sprintf("VACUUM RETAIN %s HOURS is below the table's delta.deletedFileRetentionDuration of %s HOURS; "+
		"readers of older versions and writers that have not committed yet may still need those files", hours(re.Retain.Hours()), hours(re.Floor.Hours())),
		Advice: remedy.Advice{Kind: RemedyRetain, Value: hours(re.Floor.Hours())}}
}

// RemedyRetain: retain at least Value hours, leave RETAIN out, or force
// the VACUUM.
var RemedyRetain = remedy.Define("procedure.retain", func(a remedy.Advice) string {
	return "retain at least " + a.Value + " HOURS, leave RETAIN out, or force it (as Spark's " + sparkRetentionCheck + " does)"
})

// sparkRetentionCheck is Spark's setting that forces a VACUUM below the
// retention floor.
const sparkRetentionCheck = "spark.databricks.delta.retentionDurationCheck.enabled=false"

func hours(h float64) string { return strconv.FormatFloat(h, 'f', -1, 64) }

// prepareOptimize checks an OPTIMIZE or REORG TABLE statement against
// its table and prepares its rewrite: the curve's columns exist, the table
// is one this engine may write (unless the script is a dry run), and the
// rewrite plans (its WHERE, its order).
func (s *Script) prepareOptimize(ctx context.Context, tbl *delta.Table, o *sql.Optimize) (*engine.Prepared, error) {
	ft, err := deltatable.Open(ctx, tbl, o.Location, table.WriteUnless(s.opts.DryRun))
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", o.Statement(), o.Location, err)
	}
	for _, c := range o.Columns {
		if !hasColumn(ft.Schema, c) {
			return nil, fmt.Errorf("%w: OPTIMIZE %s BY: the table has no column %s", ErrCall, strings.ToUpper(o.Curve), c)
		}
	}
	p, err := engine.Prepare(ctx, ft, s.optimizeRequest(o))
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", o.Statement(), o.Location, err)
	}
	return p, nil
}

// optimizeRequest is the rewrite an OPTIMIZE or REORG TABLE … APPLY
// (PURGE) statement asks for.
func (s *Script) optimizeRequest(o *sql.Optimize) engine.Request {
	return engine.Request{SortOrder: o.SortOrder(), Where: o.Where, PurgeDeletes: o.Purge, DryRun: s.opts.DryRun,
		Logger: s.opts.Logger, Progress: s.opts.Progress}
}

// optimizeColumns are OPTIMIZE's result columns: the table's location,
// then rewrite_data_files' counts.
var optimizeColumns = append([]string{"path"}, Columns(sql.RewriteDataFiles)...)

// runOptimize runs an OPTIMIZE statement as a rewrite of the Delta table
// (table/deltatable): bin-packing, or clustered by ZORDER BY or
// HILBERT BY; without either the table's recorded layout applies, as
// for rewrite --delta. REORG TABLE … APPLY (PURGE) runs the same way,
// rewriting exactly the files that carry a deletion vector. It runs the
// rewrite prepared with the script, unless an earlier statement moved the
// table on since: then it prepares it again, on the table as it is.
func (s *Script) runOptimize(ctx context.Context, st *step, res *Result) error {
	o := st.call.Statement.Optimize
	p := st.optimize
	st.optimize = nil
	if v, err := st.delta.LatestVersion(ctx); err != nil || p == nil || v != p.Version() {
		if p, err = s.prepareOptimize(ctx, st.delta, o); err != nil {
			return err
		}
	}
	out, err := p.Run(ctx)
	if err != nil {
		return fmt.Errorf("%s %s: %w", o.Statement(), o.Location, err)
	}
	res.DryRun, res.Detail = out.DryRun, out
	counts := &Result{Columns: Columns(sql.RewriteDataFiles)}
	counts.rewriteRows(out)
	res.NoopReason = counts.NoopReason
	res.add(append([]any{o.Location}, counts.Rows[0].Values...)...)
	return nil
}

// hasColumn reports whether the schema has the column path (a.b for a
// nested field), matching names case-insensitively as Spark does.
func hasColumn(sc *arrow.Schema, path string) bool {
	fields := sc.Fields()
	parts := strings.Split(path, ".")
	for i, p := range parts {
		k := slices.IndexFunc(fields, func(f arrow.Field) bool { return strings.EqualFold(f.Name, p) })
		if k < 0 {
			return false
		}
		if i == len(parts)-1 {
			return true
		}
		st, ok := fields[k].Type.(*arrow.StructType)
		if !ok {
			return false
		}
		fields = st.Fields()
	}
	return false
}

// runVacuum runs a VACUUM statement.
func (s *Script) runVacuum(ctx context.Context, st *step, res *Result) error {
	v := st.call.Statement.Vacuum
	out, err := st.delta.Vacuum(ctx, v.Location, s.vacuumConfig(v))
	if err != nil {
		return vacuumError(v, err)
	}
	res.DryRun, res.Detail = out.DryRun, out
	if !out.DryRun {
		res.add(v.Location)
		return nil
	}
	for _, f := range out.Files {
		res.add(joinLocation(v.Location, f.Path))
	}
	return nil
}

// joinLocation is the full path of a table-relative file, as Delta's VACUUM
// DRY RUN lists it.
func joinLocation(loc, rel string) string {
	return strings.TrimSuffix(loc, "/") + "/" + rel
}
