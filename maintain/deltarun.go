package maintain

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/table/deltatable"
	"github.com/geocompact/geocompact/table/optval"
)

// RunDelta runs one maintenance pass over the Delta table at location (a
// directory, file: URL or s3:// URL): measure it from its log
// (DeltaMetrics), gate on the policy's thresholds, optimize
// (deltatable.Rewrite with the policy's rewrite, by default the table's
// recorded layout and delta.targetFileSize), verify, vacuum on the
// policy's cadence, and measure again. The Iceberg steps (manifests,
// expire, orphans) are reported as not applicable. A Delta table takes no
// lease: the optimize commit is checked against concurrent commits (a
// conflict wraps catalogs.ErrConflict), and vacuum deletes only files no
// version within the retention needs. A failed or unverified optimize
// stops the run before the vacuum.
func RunDelta(ctx context.Context, location string, cfg Config) (*Report, error) {
	p, log, err := cfg.prepare()
	if err != nil {
		return nil, err
	}
	t, err := delta.Open(ctx, location)
	if err != nil {
		return nil, err
	}
	rep := &Report{Table: location, Format: FormatDelta, Steps: []StepReport{}, DryRun: cfg.DryRun}
	m := &maintainer{name: location, p: p, cfg: cfg, rep: rep, log: log, props: map[string]string{}}
	m.table = formatOps{
		commit: "version", cleanup: "the vacuum",
		metrics: func(ctx context.Context) (*TableMetrics, error) { return DeltaMetrics(ctx, t, nil) },
		summary: func(met *TableMetrics) string {
			return fmt.Sprintf("%d files, average %s, %d versions in the log", met.FileCount, optval.FormatBytes(met.AvgFileBytes), met.SnapshotCount)
		},
		properties: func(ctx context.Context) (map[string]string, error) {
			ft, err := deltatable.Open(ctx, t, location, true)
			return ft.Properties, err
		},
		rewrite: func(ctx context.Context, rc engine.Request) (*engine.Result, error) {
			t, err := deltatable.OpenLocation(ctx, location, rc.DryRun)
			if err != nil {
				return nil, err
			}
			return engine.Rewrite(ctx, t, rc)
		},
	}
	dm := &deltaMaintainer{maintainer: m, t: t}
	rep.step("lease", StepNotApplicable, "a Delta table takes no lease: the optimize commit is checked against concurrent commits, "+
		"and vacuum deletes only files no version within the retention needs", time.Now())
	return rep, m.run(ctx, []step{
		{"measure", m.measureBefore},
		{"gate", m.gate},
		{"rewrite", m.rewrite},
		{"manifests", notApplicable(m, "manifests", "a Delta table has no manifests; its log is checkpointed on delta.checkpointInterval")},
		{"expire", notApplicable(m, "expire", "a Delta table has no snapshots to expire: versions leave its log after delta.logRetentionDuration, and the vacuum step deletes the files they held")},
		{"orphans", notApplicable(m, "orphans", "on a Delta table the vacuum step deletes the files no version within the retention references")},
		{"vacuum", dm.vacuum},
		{"measure", m.measureAfter},
	})
}

func notApplicable(m *maintainer, name, why string) func(context.Context) error {
	return func(context.Context) error {
		m.rep.step(name, StepNotApplicable, why, time.Now())
		return nil
	}
}

// deltaMaintainer adds a Delta table's own step to a run.
type deltaMaintainer struct {
	*maintainer
	t *delta.Table
}

// vacuum vacuums the table, when due, with the policy's retention (the
// table's by default; never less) and records the vacuum in the log.
func (m *deltaMaintainer) vacuum(ctx context.Context) error {
	start := time.Now()
	vp := m.p.Vacuum
	if ok, why := m.vacuumDue(ctx, vp); !ok {
		m.rep.step("vacuum", StepSkipped, why, start)
		return nil
	}
	vc := delta.VacuumConfig{Retain: delta.TableRetention, DryRun: m.cfg.DryRun}
	if vp.Retain > 0 {
		vc.Retain = time.Duration(vp.Retain)
	}
	res, err := m.t.Vacuum(ctx, m.name, vc)
	m.rep.Vacuum = res
	if re, ok := errors.AsType[*delta.RetentionError](err); ok {
		err = fmt.Errorf("%w: vacuum.retain %s is below the table's delta.deletedFileRetentionDuration of %s: a policy may only keep files longer",
			ErrPolicy, FormatDuration(re.Retain), FormatDuration(re.Floor))
	}
	if err != nil {
		m.rep.step("vacuum", StepFailed, err.Error(), start)
		return err
	}
	what := fmt.Sprintf("%d unreferenced files (%s) removed from the table more than %s ago", len(res.Files), optval.FormatBytes(res.Bytes), FormatDuration(res.Retain()))
	if res.TempFiles > 0 {
		what += fmt.Sprintf(", %d of them temporary files of killed writers", res.TempFiles)
	}
	if res.KeptCount > 0 {
		what += fmt.Sprintf("; kept %d symbolic links", res.KeptCount)
	}
	switch {
	case m.cfg.DryRun && len(res.Files) > 0:
		m.rep.step("vacuum", StepWouldRun, "would delete "+what, start)
		return nil
	case m.cfg.DryRun:
		m.rep.step("vacuum", StepNoop, fmt.Sprintf("no unreferenced file is older than the %s retention", FormatDuration(res.Retain())), start)
		return nil
	}
	if _, err := m.t.RecordVacuum(ctx, res, catalogs.Spec{CommitRetries: m.cfg.CommitRetries}.Retries()+1); err != nil {
		m.rep.step("vacuum", StepFailed, err.Error(), start)
		return err
	}
	if len(res.Files) == 0 {
		m.rep.step("vacuum", StepNoop, fmt.Sprintf("no unreferenced file is older than the %s retention", FormatDuration(res.Retain())), start)
		return nil
	}
	m.rep.step("vacuum", StepDone, "deleted "+what, start)
	return nil
}

// vacuumDue says whether the vacuum is due by the policy's cadence and
// the last vacuum the table's log records, and why (not).
func (m *deltaMaintainer) vacuumDue(ctx context.Context, vp VacuumPolicy) (bool, string) {
	if vp.Enabled != nil && !*vp.Enabled {
		return false, "disabled by the policy"
	}
	every := time.Duration(*vp.Every)
	if every <= 0 {
		return true, ""
	}
	last, ok, err := m.t.LastVacuum(ctx)
	if err != nil || !ok {
		return true, ""
	}
	if since := time.Since(last); since < every {
		return false, fmt.Sprintf("last vacuum %s ago (a %s commit), cadence %s", since.Round(time.Second), delta.OpVacuumEnd, FormatDuration(every))
	}
	return true, ""
}
