package maintain

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/engine"
	format "github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/table/optval"
)

// censused is a format that counts its table's live files and the
// versions its log keeps itself, for the health figures (a Delta table).
type censused interface {
	Census(ctx context.Context) (*format.Census, error)
}

// reopener is a format that opens its table again at its latest
// version, for a use (format.ForWrite refuses a table the format cannot
// write).
type reopener interface {
	Reopen(ctx context.Context, use format.Use) (format.Table, error)
}

// vacuumer is a format whose clean-up is one vacuum of the files no
// version within a retention references (a Delta table), in place of
// Iceberg's manifests, expiry and orphan removal.
type vacuumer interface {
	// Vacuum deletes (lists, in a dry run) the files past the retention.
	Vacuum(ctx context.Context, cfg delta.VacuumConfig) (*delta.VacuumResult, error)
	// RecordVacuum records a finished vacuum in the table, in up to
	// attempts commits.
	RecordVacuum(ctx context.Context, res *delta.VacuumResult, attempts int) error
	// LastVacuum returns when the table last recorded a vacuum, and
	// whether it records one.
	LastVacuum(ctx context.Context) (time.Time, bool, error)
}

// vacuumingFormat is a format a run measures from its census, rewrites
// reopened and cleans up with a vacuum.
type vacuumingFormat interface {
	censused
	reopener
	vacuumer
}

// runVacuuming is Run on t, whose format vacuums: measure it from its
// log (Measure), gate on the policy's thresholds, optimize (with the
// policy's rewrite, by default the table's recorded layout and
// delta.targetFileSize), verify, vacuum on the policy's cadence, and
// measure again. The Iceberg steps (manifests, expire, orphans) are
// reported as not applicable. It takes no lease: the optimize commit is
// checked against concurrent commits (a conflict wraps
// catalogs.ErrConflict), and vacuum deletes only files no version within
// the retention needs.
func runVacuuming(ctx context.Context, t format.Table, f vacuumingFormat, p Policy, cfg Config, log *slog.Logger) (*Report, error) {
	rep := &Report{Table: t.Name, Format: t.FormatName, Steps: []StepReport{}, DryRun: cfg.DryRun}
	m := &maintainer{name: t.Name, p: p, cfg: cfg, rep: rep, log: log, props: map[string]string{},
		table: vacuumOps{f: f, formatName: t.FormatName}}
	dm := &vacuumMaintainer{maintainer: m, t: f}
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

// vacuumOps are formatOps of a table whose format vacuums, reopened for
// each.
type vacuumOps struct {
	f vacuumingFormat
	// formatName is the table's format name, its metrics' Format.
	formatName string
}

func (o vacuumOps) commitNoun() string              { return "version" }
func (o vacuumOps) cleanupStep() string             { return "the vacuum" }
func (o vacuumOps) weighsDeletes() bool             { return false }
func (o vacuumOps) lastSort(context.Context) string { return "" }

func (o vacuumOps) metrics(ctx context.Context) (*TableMetrics, error) {
	return censusMetrics(ctx, o.f, o.formatName, time.Now(), MeasureConfig{})
}

func (o vacuumOps) summary(met *TableMetrics) string {
	return fmt.Sprintf("%d files, average %s, %d versions in the log", met.FileCount, optval.FormatBytes(met.AvgFileBytes), met.SnapshotCount)
}

func (o vacuumOps) properties(ctx context.Context) (map[string]string, error) {
	t, err := o.f.Reopen(ctx, format.ForRead)
	return t.Properties, err
}

func (o vacuumOps) rewrite(ctx context.Context, rc engine.Request) (*engine.Result, error) {
	t, err := o.f.Reopen(ctx, format.WriteUnless(rc.DryRun))
	if err != nil {
		return nil, err
	}
	return engine.Rewrite(ctx, t, rc)
}

func notApplicable(m *maintainer, name, why string) func(context.Context) error {
	return func(context.Context) error {
		m.rep.step(name, StepNotApplicable, why, time.Now())
		return nil
	}
}

// vacuumMaintainer adds the vacuum step to a run.
type vacuumMaintainer struct {
	*maintainer
	t vacuumer
}

// vacuum vacuums the table, when due, with the policy's retention (the
// table's by default; never less) and records the vacuum in the log.
func (m *vacuumMaintainer) vacuum(ctx context.Context) error {
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
	res, err := m.t.Vacuum(ctx, vc)
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
	if err := m.t.RecordVacuum(ctx, res, catalogs.Spec{CommitRetries: m.cfg.CommitRetries}.Retries()+1); err != nil {
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
func (m *vacuumMaintainer) vacuumDue(ctx context.Context, vp VacuumPolicy) (bool, string) {
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
