package procedure

import (
	"context"
	"fmt"
	"time"

	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/maintain"
	"github.com/geocompact/geocompact/maintain/posdeletes"
	"github.com/geocompact/geocompact/sql"
	"github.com/geocompact/geocompact/table/icebergtable"
)

// run runs one statement.
func (s *Script) run(ctx context.Context, st *step) (*Result, error) {
	c := st.call
	res := &Result{Statement: c.Statement.Index, Line: c.Statement.Line, Catalog: st.catalog, Procedure: c.Procedure,
		Table: c.Table, Command: c.Statement.Command(), Columns: Columns(c.Procedure), Rows: []Row{}, Ignored: c.Ignored}
	if v := c.Statement.Vacuum; v != nil {
		res.Location, res.Columns = v.Location, vacuumColumns
		return res, s.runVacuum(ctx, st, res)
	}
	if o := c.Statement.Optimize; o != nil {
		res.Location, res.Columns = o.Location, optimizeColumns
		return res, s.runOptimize(ctx, st, res)
	}
	if a := c.Statement.Alter; a != nil {
		res.Location, res.Columns = a.Location, alterColumns
		if a.Location != "" {
			res.Columns = alterDeltaColumns
		}
		return res, s.runAlter(ctx, st, res)
	}
	log := s.opts.Logger
	switch c.Procedure {
	case sql.RewriteDataFiles:
		req := engine.Request{Strategy: engine.Strategy(c.Strategy), SortOrder: c.SortOrder, Where: c.Where, Options: c.Options,
			DryRun: s.opts.DryRun, CommitRetries: st.spec.Retries(), Logger: log, Progress: s.opts.Progress}
		t, err := icebergtable.Open(ctx, st.cat, c.Table)
		if err != nil {
			return nil, err
		}
		out, err := engine.Rewrite(ctx, t, req)
		if err != nil {
			return nil, err
		}
		res.DryRun, res.Detail = out.DryRun, out
		res.rewriteRows(out)
	case sql.ExpireSnapshots:
		cfg, err := s.expireConfig(st)
		if err != nil {
			return nil, err
		}
		out, err := maintain.Expire(ctx, st.cat, c.Table, cfg)
		if err != nil {
			return nil, err
		}
		res.DryRun, res.Detail = out.DryRun, out
		res.expireRows(out)
	case sql.RemoveOrphanFiles:
		cfg, err := s.orphansConfig(st)
		if err != nil {
			return nil, err
		}
		out, err := maintain.RemoveOrphans(ctx, st.cat, c.Table, cfg)
		if err != nil {
			return nil, err
		}
		res.DryRun, res.Detail = out.DryRun, out
		res.orphanRows(out)
	case sql.RewriteManifests:
		if s.opts.DryRun {
			res.DryRun, res.Skipped = true, "rewrite_manifests has no dry run; it was not run"
			return res, nil
		}
		out, err := maintain.RewriteManifests(ctx, st.cat, c.Table, maintain.ManifestsConfig{
			TargetSizeBytes: c.TargetManifestSizeBytes, CommitRetries: st.spec.Retries(), Logger: log})
		if err != nil {
			return nil, err
		}
		res.Detail = out
		res.manifestRows(out)
	case sql.RewritePositionDeleteFiles:
		return res, s.runRewriteDeletes(ctx, st, res)
	default:
		return nil, fmt.Errorf("%w: no runner for procedure %s", ErrCall, c.Procedure)
	}
	return res, nil
}

// runRewriteDeletes runs rewrite_position_delete_files into res.
func (s *Script) runRewriteDeletes(ctx context.Context, st *step, res *Result) error {
	c := st.call
	out, err := posdeletes.Rewrite(ctx, st.cat, c.Table, posdeletes.Config{Where: c.Where, Options: c.Options,
		DryRun: s.opts.DryRun, CommitRetries: st.spec.Retries(), Logger: s.opts.Logger})
	if err != nil {
		return err
	}
	res.DryRun, res.Detail, res.NoopReason = out.DryRun, out, out.NoopReason
	res.add(int64(out.RewrittenDeleteFilesCount), int64(out.AddedDeleteFilesCount), out.RewrittenBytesCount, out.AddedBytesCount)
	return nil
}

func (s *Script) expireConfig(st *step) (maintain.ExpireConfig, error) {
	cfg := maintain.DefaultExpireConfig()
	age, err := s.age(st, cfg.OlderThan)
	if err != nil {
		return cfg, err
	}
	cfg.OlderThan = age
	if st.call.RetainLast > 0 {
		cfg.RetainLast = st.call.RetainLast
	}
	cfg.DryRun = st.call.DryRun || s.opts.DryRun
	cfg.Force, cfg.CommitRetries, cfg.Logger = s.opts.Force, st.spec.Retries(), s.opts.Logger
	return cfg, nil
}

func (s *Script) orphansConfig(st *step) (maintain.OrphansConfig, error) {
	cfg := maintain.DefaultOrphansConfig()
	age, err := s.age(st, cfg.OlderThan)
	if err != nil {
		return cfg, err
	}
	cfg.OlderThan, cfg.Location = age, st.call.Location
	cfg.DryRun = st.call.DryRun || s.opts.DryRun
	cfg.Force, cfg.Logger = s.opts.Force, s.opts.Logger
	return cfg, nil
}

// age turns older_than into the age the maintenance configs take, or def
// when the call has none.
func (s *Script) age(st *step, def time.Duration) (time.Duration, error) {
	if st.call.OlderThan.IsZero() {
		return def, nil
	}
	age := time.Since(st.call.OlderThan)
	if age < 0 {
		return 0, fmt.Errorf("%w: %s: argument older_than %s is in the future", ErrCall, st.call.Procedure, st.call.OlderThan.Format(time.RFC3339))
	}
	return age, nil
}
