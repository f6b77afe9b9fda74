// Package procedure runs Iceberg's Spark procedures, as sql parses
// and binds them, on geocompact's library: rewrite_data_files is
// engine.Rewrite; expire_snapshots, remove_orphan_files and
// rewrite_manifests are maintain's Expire, RemoveOrphans and
// RewriteManifests. Delta Lake's VACUUM is delta.Table.Vacuum, the vacuum
// command's own code; OPTIMIZE is table/deltatable's rewrite, as
// rewrite --delta runs it. ALTER TABLE is alter's Apply, the alter
// command's own code. A script is checked whole
// before its first statement runs, so a typo in the last statement
// changes nothing.
package procedure

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/apache/iceberg-go/catalog"

	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/internal/suggest"
	"github.com/geocompact/geocompact/maintain/posdeletes"
	"github.com/geocompact/geocompact/sql"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/table/where"
)

// ErrCall marks a call that cannot run as written: an unknown catalog, an
// older_than in the future. Errors of sql (sql.ErrInvalid), of the
// where argument (where.ErrInvalid) and of options (optval.ErrBad) keep
// their own sentinels.
var ErrCall = errors.New("procedure: bad call")

// StatementError is the failure of one statement of a script; the
// statements before it have run, the ones after it have not.
type StatementError struct {
	// Statement is the 1-based index of the statement, Line its line.
	Statement, Line int
	// Procedure is the procedure's name as written, or the command of a
	// Delta statement (VACUUM, OPTIMIZE).
	Procedure string
	Err       error
}

func (e *StatementError) Error() string {
	if _, ok := errors.AsType[*sql.Error](e.Err); ok {
		return fmt.Sprintf("statement %d: %v", e.Statement, e.Err) // the error has the line
	}
	return fmt.Sprintf("statement %d (line %d, %s): %v", e.Statement, e.Line, e.Procedure, e.Err)
}

func (e *StatementError) Unwrap() error { return e.Err }

// Options apply to every statement of a script.
type Options struct {
	// DryRun runs every statement as a dry run: rewrite_data_files plans,
	// expire_snapshots and remove_orphan_files list what they would
	// delete, and rewrite_manifests and ALTER TABLE, which have no dry
	// run, are checked and skipped.
	DryRun bool
	// Force allows an older_than younger than maintain.MinRetention, and
	// a VACUUM RETAIN below the table's delta.deletedFileRetentionDuration
	// (what Spark's spark.databricks.delta.retentionDurationCheck.enabled
	// = false allows).
	Force bool
	// Logger receives the library's log lines; nil discards.
	Logger *slog.Logger
	// Progress, when set, is told each phase of a rewrite_data_files (see
	// engine.Request.Progress).
	Progress func(engine.Progress)
	// WrapCatalog, when set, wraps each catalog the script opens (the
	// command line uses it to warn about tables outside the warehouse).
	WrapCatalog func(catalog.Catalog, catalogs.Spec) catalog.Catalog
}

// Script is a parsed, bound and checked script, ready to run. Close it to
// release the catalogs it opened.
type Script struct {
	steps []*step
	opts  Options
	open  map[string]catalog.Catalog
}

// step is one statement with the catalog it runs on, or the Delta table.
type step struct {
	call    sql.Call
	catalog string
	spec    catalogs.Spec
	cat     catalog.Catalog
	delta   *delta.Table
	// optimize is the rewrite an OPTIMIZE or REORG TABLE statement was
	// prepared as, at the table's version then.
	optimize *engine.Prepared
}

// name is the step's procedure, or its command for a Delta statement.
func (st *step) name() string {
	if st.call.Procedure != "" {
		return st.call.Procedure
	}
	return st.call.Statement.Command()
}

// Prepare parses src, binds every statement to its procedure, opens the
// catalogs they name and checks each call against its table (the table
// exists; the where argument, options and retention are valid), so that
// nothing runs unless every statement can. A parse error is a *sql.Error;
// any other is a *StatementError.
func Prepare(ctx context.Context, src string, cats Catalogs, opts Options) (*Script, error) {
	sts, err := sql.Parse(src)
	if err != nil {
		return nil, err
	}
	s := &Script{opts: opts, open: map[string]catalog.Catalog{}}
	for _, st := range sts {
		stp, err := s.prepare(ctx, st, src, cats)
		if err != nil {
			s.Close()
			name := st.Procedure
			if name == "" {
				name = st.Command()
			}
			return nil, &StatementError{Statement: st.Index, Line: st.Line, Procedure: name, Err: err}
		}
		s.steps = append(s.steps, stp)
	}
	return s, nil
}

// prepare binds and checks one statement.
func (s *Script) prepare(ctx context.Context, st sql.Statement, src string, cats Catalogs) (*step, error) {
	switch st.Command() {
	case sql.CommandAlter:
		return s.prepareAlter(ctx, st, cats)
	case sql.CommandVacuum, sql.CommandOptimize, sql.CommandReorg:
		return s.prepareDelta(ctx, st)
	}
	call, err := sql.Bind(st, src)
	if err != nil {
		return nil, err
	}
	stp, err := s.resolve(ctx, call, cats)
	if err != nil {
		return nil, err
	}
	return stp, s.check(ctx, stp)
}

// resolve finds and opens the catalog of call, once per catalog.
func (s *Script) resolve(ctx context.Context, call sql.Call, cats Catalogs) (*step, error) {
	spec, err := cats.Spec(call.Catalog)
	if err != nil {
		return nil, err
	}
	name := specName(spec)
	cat, ok := s.open[name]
	if !ok {
		if cat, err = catalogs.Open(ctx, spec); err != nil {
			return nil, err
		}
		if s.opts.WrapCatalog != nil {
			cat = s.opts.WrapCatalog(cat, spec)
		}
		s.open[name] = cat
	}
	return &step{call: call, catalog: name, spec: spec, cat: cat}, nil
}

// check loads the table of st and checks what can be checked before
// anything runs.
func (s *Script) check(ctx context.Context, st *step) error {
	tbl, err := catalogs.LoadTable(ctx, st.cat, st.call.Table)
	if err != nil {
		return err
	}
	switch st.call.Procedure {
	case sql.RewriteDataFiles:
		if _, err := (engine.Request{Options: st.call.Options}).OptionsFor(tbl.Properties()); err != nil {
			return fmt.Errorf("%s: argument options: %w", st.call.Procedure, err)
		}
		if _, err := where.Parse(st.call.Where, tbl.Schema()); err != nil {
			return fmt.Errorf("%s: argument where %s: %w", st.call.Procedure, suggest.Excerpt(st.call.SparkWhere), err)
		}
	case sql.RewritePositionDeleteFiles:
		if _, err := posdeletes.ParseOptions(st.call.Options, tbl.Properties()); err != nil {
			return fmt.Errorf("%s: argument options: %w", st.call.Procedure, err)
		}
		if _, err := where.Parse(st.call.Where, tbl.Schema()); err != nil {
			return fmt.Errorf("%s: argument where %s: %w", st.call.Procedure, suggest.Excerpt(st.call.SparkWhere), err)
		}
	case sql.ExpireSnapshots:
		cfg, err := s.expireConfig(st)
		if err == nil {
			err = cfg.Validate()
		}
		return err
	case sql.RemoveOrphanFiles:
		cfg, err := s.orphansConfig(st)
		if err == nil {
			err = cfg.Validate()
		}
		return err
	}
	return nil
}

// Calls returns the bound calls, in order; a Delta statement's has only
// its Statement set.
func (s *Script) Calls() []sql.Call {
	out := make([]sql.Call, len(s.steps))
	for i, st := range s.steps {
		out[i] = st.call
	}
	return out
}

// Close releases the catalogs the script opened.
func (s *Script) Close() {
	for _, cat := range s.open {
		if c, ok := cat.(io.Closer); ok {
			_ = c.Close()
		}
	}
	s.open = nil
}

// Run runs the statements in order and hands each result to emit as soon
// as its statement is done. The first failure stops the script with a
// *StatementError; a failing emit stops it too.
func (s *Script) Run(ctx context.Context, emit func(*Result) error) error {
	for _, st := range s.steps {
		res, err := s.run(ctx, st)
		if err != nil {
			c := st.call.Statement
			return &StatementError{Statement: c.Index, Line: c.Line, Procedure: st.name(), Err: err}
		}
		if err := emit(res); err != nil {
			return err
		}
	}
	return nil
}
