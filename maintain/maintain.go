package maintain

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/maintain/posdeletes"
	format "github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/table/icebergtable"
	"github.com/geocompact/geocompact/table/layouts"
	"github.com/geocompact/geocompact/table/optval"
)

// Gate thresholds, by their policy names.
const (
	GateMinAvgFileBytes      = "min-avg-file-bytes"
	GateMaxFilesPerPartition = "max-files-per-partition"
)

// GateDecision says whether a maintain run compacts, and why.
type GateDecision struct {
	// Compact is set when a threshold fired.
	Compact bool `json:"compact"`
	// Fired lists the thresholds that fired, by their policy names.
	Fired []string `json:"fired"`
	// Partitions lists the partitions that fired ("" is the unpartitioned
	// table).
	Partitions []string `json:"partitions"`
	// Reason says which threshold fired where, or that none did.
	Reason string `json:"reason"`
}

// Evaluate applies the gate to a table's metrics. A partition fires
// min-avg-file-bytes when it holds at least two files averaging below the
// floor (one file cannot be compacted further), and
// max-files-per-partition when it holds more files than the ceiling. A
// threshold of zero or below is off.
func (g GatePolicy) Evaluate(m *TableMetrics) GateDecision {
	d := GateDecision{Fired: []string{}, Partitions: []string{}}
	var small, many []PartitionMetrics
	for _, p := range m.Partitions {
		isSmall := g.MinAvgFileBytes > 0 && p.FileCount >= 2 && p.AvgFileBytes < g.MinAvgFileBytes
		isMany := g.MaxFilesPerPartition > 0 && p.FileCount > g.MaxFilesPerPartition
		if isSmall {
			small = append(small, p)
		}
		if isMany {
			many = append(many, p)
		}
		if isSmall || isMany {
			d.Partitions = append(d.Partitions, p.Partition)
		}
	}
	if len(small) > 0 {
		d.Fired = append(d.Fired, GateMinAvgFileBytes)
		w := small[0]
		for _, p := range small {
			if p.AvgFileBytes < w.AvgFileBytes {
				w = p
			}
		}
		d.Reason = fmt.Sprintf("%s fired: %d of %d partitions average below %s (smallest: %s, %d files averaging %s)",
			GateMinAvgFileBytes, len(small), len(m.Partitions), optval.FormatBytes(g.MinAvgFileBytes), engine.PartitionLabel(w.Partition), w.FileCount, optval.FormatBytes(w.AvgFileBytes))
	}
	if len(many) > 0 {
		d.Fired = append(d.Fired, GateMaxFilesPerPartition)
		w := many[0]
		for _, p := range many {
			if p.FileCount > w.FileCount {
				w = p
			}
		}
		r := fmt.Sprintf("%s fired: %d partitions hold more than %d files (most: %s, %d files)",
			GateMaxFilesPerPartition, len(many), g.MaxFilesPerPartition, engine.PartitionLabel(w.Partition), w.FileCount)
		if d.Reason != "" {
			d.Reason += "; " + r
		} else {
			d.Reason = r
		}
	}
	d.Compact = len(d.Fired) > 0
	if !d.Compact {
		d.Reason = fmt.Sprintf("no threshold fired: no partition of %d averages below %s over two or more files, none holds more than %d files",
			len(m.Partitions), optval.FormatBytes(g.MinAvgFileBytes), g.MaxFilesPerPartition)
	}
	return d
}

// weighDeletes fires the gate when deletes hide more than the policy's
// rewrite-data-above of the rows: rewriting the files they apply to is
// then the cure, not compacting the delete files.
func (d *GateDecision) weighDeletes(p DeletesPolicy, m *TableMetrics) {
	if p.RewriteDataAbove < 0 || m == nil || m.Deletes == nil || m.Deletes.DeletedFraction <= p.RewriteDataAbove {
		return
	}
	d.Fired = append(d.Fired, GateRewriteDataAbove)
	r := fmt.Sprintf("%s fired: deletes hide %.1f%% of the rows (threshold %.1f%%); the rewrite applies them",
		GateRewriteDataAbove, 100*m.Deletes.DeletedFraction, 100*p.RewriteDataAbove)
	if d.Compact {
		d.Reason += "; " + r
	} else {
		d.Reason = r
	}
	d.Compact = true
}

// Step statuses in a Report.
const (
	StepDone    = "done"
	StepSkipped = "skipped"
	StepNoop    = "nothing to do"
	StepFailed  = "failed"
	// StepWouldRun marks a step a dry run found work for; its detail says
	// what a real run would do.
	StepWouldRun = "would run"
	// StepNotApplicable marks a step the table's format has no use for
	// (manifests, expiry and orphans on a Delta table); its detail says
	// why.
	StepNotApplicable = "not applicable"
)

// StepReport is one step of a maintain run.
type StepReport struct {
	Step     string        `json:"step"`
	Status   string        `json:"status"`
	Detail   string        `json:"detail"`
	Duration time.Duration `json:"duration_ns"`
}

// Config is one maintain run.
type Config struct {
	// Policy says what the run does; missing fields take DefaultPolicy's
	// values.
	Policy Policy
	// Owner names this run in the lease (default NewLeaseOwner()).
	Owner string
	// CommitRetries is the budget for commits that lose a race with another
	// writer (0 means 4, negative none).
	CommitRetries int
	// Logger receives one line per phase; nil discards.
	Logger *slog.Logger
	// DryRun reports what each step would do and changes nothing: no
	// lease is taken, the rewrite only plans, expiry and orphan removal
	// only list.
	DryRun bool
	// Progress, when set, is told each step as it starts and, during the
	// rewrite, where the rewrite is.
	Progress func(Progress)
}

// prepare returns the run's policy, its defaults filled in and checked,
// and its logger.
func (cfg Config) prepare() (Policy, *slog.Logger, error) {
	p := cfg.Policy
	p.fillDefaults()
	if err := p.Validate(); err != nil {
		return p, nil, err
	}
	log := orDiscard(cfg.Logger)
	return p, log, nil
}

// orDiscard returns log, or a logger that discards when log is nil.
func orDiscard(log *slog.Logger) *slog.Logger {
	if log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return log
}

// Progress says where a maintain run is: step Index of Steps, and for the
// rewrite step the rewrite's own progress (nil otherwise).
type Progress struct {
	Step         string
	Index, Steps int
	Rewrite      *engine.Progress
}

// Report is what a maintain run did, step by step, with the
// table's metrics before and after.
type Report struct {
	Table string `json:"table"`
	// Format is FormatDelta for a Delta table's run, whose metrics count
	// the versions in its log where an Iceberg table's count snapshots
	// (see MarshalJSON); empty for an Iceberg table.
	Format  string         `json:"format,omitempty"`
	DryRun  bool           `json:"dry_run"`
	Lease   *Lease         `json:"lease,omitempty"`
	Steps   []StepReport   `json:"steps"`
	Before  *TableMetrics  `json:"before"`
	Gate    GateDecision   `json:"gate"`
	Rewrite *engine.Result `json:"rewrite,omitempty"`
	// Deletes is the delete file compaction of an Iceberg table's run.
	Deletes   *posdeletes.Result `json:"deletes,omitempty"`
	Manifests *ManifestsResult   `json:"manifests,omitempty"`
	Expire    *ExpireResult      `json:"expire,omitempty"`
	Orphans   *OrphansResult     `json:"orphans,omitempty"`
	// Vacuum is a Delta table's vacuum.
	Vacuum *delta.VacuumResult `json:"vacuum,omitempty"`
	// Warnings are what the run noticed and a person should know, one
	// line each (a sorted table about to be bin-packed).
	Warnings []string      `json:"warnings,omitempty"`
	After    *TableMetrics `json:"after,omitempty"`
}

func (r *Report) step(name, status, detail string, start time.Time) {
	r.Steps = append(r.Steps, StepReport{Step: name, Status: status, Detail: detail, Duration: time.Since(start)})
}

// Run runs one maintenance pass over t, a table opened at its latest
// version (table/icebergtable, table/deltatable), the loop a scheduler
// calls. On an Iceberg table: take the lease, measure, gate, rewrite,
// verify, merge manifests, expire, remove orphans, measure again, release
// the lease. On a table whose format vacuums (a Delta table): measure it
// from its log, gate, rewrite (an OPTIMIZE), verify, vacuum on the
// policy's cadence, and measure again, with the lease and the Iceberg
// steps reported as not applicable. Every step's outcome is in the
// report, also when an error stops the run; a failed or unverified
// rewrite stops the run before anything is expired or vacuumed. Another
// run holding an Iceberg table returns a *LeaseError (retryable).
func Run(ctx context.Context, t format.Table, cfg Config) (*Report, error) {
	p, log, err := cfg.prepare()
	if err != nil {
		return nil, err
	}
	if v, ok := t.Format.(vacuumingFormat); ok {
		return runVacuuming(ctx, t, v, p, cfg, log)
	}
	it, ok := t.Format.(*icebergtable.Table)
	if !ok {
		return nil, fmt.Errorf("maintain %s: the table's format cannot be maintained", t.Name)
	}
	return runIceberg(ctx, it.Catalog, t.Name, p, cfg, log)
}

// runIceberg is Run on the Iceberg table called name in cat.
func runIceberg(ctx context.Context, cat catalog.Catalog, name string, p Policy, cfg Config, log *slog.Logger) (rep *Report, err error) {
	owner := cfg.Owner
	if owner == "" {
		owner = NewLeaseOwner()
	}
	rep = &Report{Table: name, Steps: []StepReport{}, DryRun: cfg.DryRun}
	start := time.Now()
	if cfg.DryRun {
		rep.step("lease", StepSkipped, "dry run: no lease taken, nothing is changed", start)
		m := newIcebergMaintainer(cat, name, p, cfg, rep, log)
		return rep, m.run(ctx, m.icebergSteps())
	}
	lease, err := AcquireLease(ctx, cat, name, owner, time.Duration(p.Lease.TTL))
	if errors.Is(err, ErrNoSnapshot) {
		rep.step("lease", StepNoop, "the table has no snapshot: nothing to maintain", start)
		return rep, nil
	}
	if err != nil {
		return rep, err
	}
	rep.Lease = lease
	detail := fmt.Sprintf("held by %s until %s", owner, lease.Expires.UTC().Format(time.RFC3339))
	switch {
	case lease.HolderGone:
		detail += fmt.Sprintf(" (took over the lease of %s, a process of this host that is gone)", lease.TookOverFrom)
		log.Warn("maintain lease taken over from a dead holder", "table", name, "holder", lease.TookOverFrom)
	case lease.TookOverFrom != "":
		detail += fmt.Sprintf(" (took over the lapsed lease of %s)", lease.TookOverFrom)
	}
	rep.step("lease", StepDone, detail, start)
	log.Info("maintain lease taken", "table", name, "owner", owner, "took_over_from", lease.TookOverFrom)
	m := newIcebergMaintainer(cat, name, p, cfg, rep, log)
	m.lease = lease
	defer func() {
		if rerr := lease.Release(context.WithoutCancel(ctx), m.props); rerr != nil {
			log.Warn("maintain lease release failed", "table", name, "err", rerr)
			if err == nil {
				err = fmt.Errorf("release lease: %w", rerr)
			}
		}
	}()
	return rep, m.run(ctx, m.icebergSteps())
}

type maintainer struct {
	cat   catalog.Catalog
	name  string
	p     Policy
	cfg   Config
	lease *Lease
	rep   *Report
	log   *slog.Logger
	// props are the last-run times recorded at the next renewal or release.
	props map[string]string
	// at is the step running, for progress.
	at Progress
	// table is the format the steps measure, gate and rewrite through.
	table formatOps
}

// formatOps are what the shared steps (measure, gate, rewrite) ask of
// the table's format.
type formatOps interface {
	// commitNoun names what a rewrite commits ("snapshot" or "version"),
	// and cleanupStep the step a failed verification stops the run
	// before.
	commitNoun() string
	cleanupStep() string
	// metrics measures the table; summary describes them for the report.
	metrics(context.Context) (*TableMetrics, error)
	summary(*TableMetrics) string
	// properties are the table's properties, as rewrite options default
	// from them.
	properties(context.Context) (map[string]string, error)
	// rewrite runs the rewrite the policy asks for.
	rewrite(context.Context, engine.Request) (*engine.Result, error)
	// weighsDeletes says the gate weighs the deletes policy: the format's
	// rewrite applies deletes by delete-file-threshold.
	weighsDeletes() bool
	// lastSort returns the sort order of the table's last rewrite when
	// it was sorted ("" when it was not, or none is known).
	lastSort(context.Context) string
}

// icebergOps are formatOps of the Iceberg table called name in cat,
// loaded again for each.
type icebergOps struct {
	cat  catalog.Catalog
	name string
}

func (o icebergOps) commitNoun() string  { return "snapshot" }
func (o icebergOps) cleanupStep() string { return "expiry" }
func (o icebergOps) weighsDeletes() bool { return true }

func (o icebergOps) lastSort(ctx context.Context) string {
	tbl, err := catalogs.LoadTable(ctx, o.cat, o.name)
	if err != nil {
		return ""
	}
	return lastSortedRewrite(tbl.Metadata().Snapshots())
}

func (o icebergOps) metrics(ctx context.Context) (*TableMetrics, error) {
	tbl, err := catalogs.LoadTable(ctx, o.cat, o.name)
	if err != nil {
		return nil, err
	}
	return Metrics(ctx, tbl)
}

func (o icebergOps) summary(met *TableMetrics) string {
	return fmt.Sprintf("%d files, average %s, %d snapshots, %d manifests",
		met.FileCount, optval.FormatBytes(met.AvgFileBytes), met.SnapshotCount, met.ManifestCount)
}

func (o icebergOps) properties(ctx context.Context) (map[string]string, error) {
	tbl, err := catalogs.LoadTable(ctx, o.cat, o.name)
	if err != nil {
		return nil, err
	}
	return tbl.Properties(), nil
}

func (o icebergOps) rewrite(ctx context.Context, rc engine.Request) (*engine.Result, error) {
	t, err := icebergtable.Open(ctx, o.cat, o.name)
	if err != nil {
		return nil, err
	}
	return engine.Rewrite(ctx, t, rc)
}

func newIcebergMaintainer(cat catalog.Catalog, name string, p Policy, cfg Config, rep *Report, log *slog.Logger) *maintainer {
	return &maintainer{cat: cat, name: name, p: p, cfg: cfg, rep: rep, log: log, props: map[string]string{}, table: icebergOps{cat: cat, name: name}}
}

// step is one step of a run.
type step struct {
	name string
	run  func(context.Context) error
}

// icebergSteps are the steps of an Iceberg table's run.
func (m *maintainer) icebergSteps() []step {
	return []step{
		{"measure", m.measureBefore},
		{"gate", m.gate},
		{"rewrite", m.rewrite},
		{"deletes", m.deletes},
		{"manifests", m.manifests},
		{"expire", m.expire},
		{"orphans", m.orphans},
		{"measure", m.measureAfter},
	}
}

func (m *maintainer) measureBefore(ctx context.Context) (err error) {
	m.rep.Before, err = m.measure(ctx)
	return err
}

// run runs the steps in order; the first error stops the run. Every
// error names its step, as the report does.
func (m *maintainer) run(ctx context.Context, steps []step) error {
	for i, st := range steps {
		m.at = Progress{Step: st.name, Index: i + 1, Steps: len(steps)}
		if m.cfg.Progress != nil {
			m.cfg.Progress(m.at)
		}
		if err := st.run(ctx); err != nil {
			return fmt.Errorf("maintain %s: %s: %w", m.name, st.name, err)
		}
	}
	return nil
}

// measureAfter measures the table again, unless a dry run left it as it
// was.
func (m *maintainer) measureAfter(ctx context.Context) (err error) {
	if m.cfg.DryRun {
		m.rep.step("measure", StepSkipped, "dry run: the table is unchanged", time.Now())
		return nil
	}
	m.rep.After, err = m.measure(ctx)
	return err
}

// measure records the table's metrics as a step.
func (m *maintainer) measure(ctx context.Context) (*TableMetrics, error) {
	start := time.Now()
	met, err := m.table.metrics(ctx)
	if err != nil {
		m.rep.step("measure", StepFailed, err.Error(), start)
		return nil, err
	}
	m.rep.step("measure", StepDone, m.table.summary(met), start)
	return met, nil
}

// gate decides, from the metrics measured first, whether the run compacts.
// A policy without min-avg-file-bytes takes a quarter of the rewrite's
// target file size: the policy's target-file-size-bytes option, else the
// table's write.target-file-size-bytes, else the engine's default.
func (m *maintainer) gate(ctx context.Context) error {
	start := time.Now()
	g := m.p.Gate
	if g.MinAvgFileBytes == 0 {
		props, err := m.table.properties(ctx)
		if err != nil {
			return err
		}
		opts, err := m.p.rewriteRequest().OptionsFor(props)
		if err != nil {
			m.rep.step("gate", StepFailed, err.Error(), start)
			return err
		}
		g.MinAvgFileBytes = opts.TargetFileSize / 4
	}
	m.rep.Gate = g.Evaluate(m.rep.Before)
	if m.table.weighsDeletes() {
		m.rep.Gate.weighDeletes(m.p.Deletes, m.rep.Before)
	}
	m.rep.step("gate", map[bool]string{true: StepDone, false: StepNoop}[m.rep.Gate.Compact], m.rep.Gate.Reason, start)
	return nil
}

func (m *maintainer) rewrite(ctx context.Context) error {
	rep := m.rep
	start := time.Now()
	if !rep.Gate.Compact {
		rep.step("rewrite", StepSkipped, "the gate did not fire", start)
		rep.step("verify", StepSkipped, "nothing was rewritten", start)
		return nil
	}
	rc := m.p.rewriteRequest()
	rc.CommitRetries, rc.Logger, rc.DryRun = m.cfg.CommitRetries, m.log, m.cfg.DryRun
	if slices.Contains(rep.Gate.Fired, GateRewriteDataAbove) {
		if _, set := rc.Options[engine.OptDeleteFileThreshold]; !set {
			rc.Options = maps.Clone(rc.Options)
			if rc.Options == nil {
				rc.Options = map[string]string{}
			}
			rc.Options[engine.OptDeleteFileThreshold] = "1"
		}
	}
	if m.cfg.Progress != nil {
		rc.Progress = func(p engine.Progress) {
			at := m.at
			at.Rewrite = &p
			m.cfg.Progress(at)
		}
	}
	res, err := m.table.rewrite(ctx, rc)
	rep.Rewrite = res
	if err != nil {
		rep.step("rewrite", StepFailed, err.Error(), start)
		return err
	}
	m.warnUnsorting(ctx, res)
	if res.NoopReason != "" {
		rep.step("rewrite", StepNoop, res.NoopReason, start)
		rep.step("verify", StepSkipped, "nothing was rewritten", start)
		return nil
	}
	if m.cfg.DryRun {
		out := 0
		for _, g := range res.Plan.Groups {
			out += g.OutputFiles
		}
		rep.step("rewrite", StepWouldRun, fmt.Sprintf("would rewrite %d files (%s) in %d groups into about %d, %s",
			res.Plan.Files(), optval.FormatBytes(res.Plan.Bytes()), len(res.Plan.Groups), out, res.LayoutText()), start)
		rep.step("verify", StepSkipped, "dry run: nothing is written", start)
		return nil
	}
	rep.step("rewrite", StepDone, fmt.Sprintf("%d files (%s) rewritten into %d (%s) in %d %s(s), %s",
		res.RewrittenDataFilesCount, optval.FormatBytes(res.RewrittenBytesCount), res.AddedDataFilesCount, optval.FormatBytes(res.AddedBytesCount), res.SnapshotsCommitted,
		m.table.commitNoun(), res.LayoutText()), start)
	start = time.Now()
	if !res.Verified {
		err := fmt.Errorf("verify: the rewrite committed %d %s(s) but did not verify (%d files failed); stopping before %s",
			res.SnapshotsCommitted, m.table.commitNoun(), res.FailedDataFilesCount, m.table.cleanupStep())
		rep.step("verify", StepFailed, err.Error(), start)
		return err
	}
	rep.step("verify", StepDone, "rows, bbox extent and content checksum equal before and after", start)
	m.props[PropLastRewriteMs] = strconv.FormatInt(time.Now().UnixMilli(), 10)
	return m.renew(ctx)
}

// deletes compacts the position delete files when the table holds more
// than the policy's max-delete-files, after the rewrite dropped those it
// applied.
func (m *maintainer) deletes(ctx context.Context) error {
	start := time.Now()
	limit := m.p.Deletes.MaxDeleteFiles
	met := m.rep.Before
	if !m.cfg.DryRun && m.rep.Rewrite != nil && m.rep.Rewrite.SnapshotsCommitted > 0 {
		var err error
		if met, err = m.table.metrics(ctx); err != nil {
			m.rep.step("deletes", StepFailed, err.Error(), start)
			return err
		}
	}
	var n int64
	if met != nil && met.Deletes != nil {
		n = met.Deletes.PositionDeleteFiles
	}
	if limit < 0 || n <= limit {
		m.rep.step("deletes", StepSkipped, fmt.Sprintf("%d position delete files, threshold %d", n, limit), start)
		return nil
	}
	res, err := posdeletes.Rewrite(ctx, m.cat, m.name, posdeletes.Config{Options: m.p.Deletes.Options, DryRun: m.cfg.DryRun,
		CommitRetries: m.cfg.CommitRetries, Logger: m.log})
	m.rep.Deletes = res
	switch {
	case err != nil:
		m.rep.step("deletes", StepFailed, err.Error(), start)
		return err
	case res.NoopReason != "":
		m.rep.step("deletes", StepNoop, res.NoopReason, start)
		return nil
	case m.cfg.DryRun:
		m.rep.step("deletes", StepWouldRun, fmt.Sprintf("would merge %d position delete files in %d groups (threshold %d)", res.RewrittenDeleteFilesCount, res.Groups, limit), start)
		return nil
	}
	m.rep.step("deletes", StepDone, fmt.Sprintf("%d delete files merged into %d, %d positions kept, %d dropped (threshold %d)",
		res.RewrittenDeleteFilesCount, res.AddedDeleteFilesCount, res.DeletesKept, res.DanglingDropped, limit), start)
	return m.renew(ctx)
}

// warnUnsorting warns when the run bin-packs a table by default whose
// last rewrite was sorted: the table records no layout, so maintenance
// undoes the order a person asked for once.
func (m *maintainer) warnUnsorting(ctx context.Context, res *engine.Result) {
	if res.LayoutSource != layouts.FromDefault || res.Strategy != string(engine.BinPack) {
		return
	}
	if order := m.table.lastSort(ctx); order != "" {
		m.rep.Warnings = append(m.rep.Warnings, fmt.Sprintf("the table's last rewrite was sorted (%s) but the table records no layout, so this run bin-packs; "+
			"record the layout with geocompact alter --table %s --sort-order '%s' (or set the policy's rewrite.curve)", order, m.name, order))
		m.log.Warn("maintain bin-packs a table whose last rewrite was sorted", "table", m.name, "sort_order", order)
	}
}

// lastSortedRewrite returns the sort order of the newest snapshot a
// geocompact rewrite committed when that rewrite sorted, else "".
func lastSortedRewrite(snaps []table.Snapshot) string {
	var newest *table.Snapshot
	for i := range snaps {
		s := &snaps[i]
		if s.Summary == nil || s.Summary.Properties[format.SummaryStrategy] == "" {
			continue
		}
		if newest == nil || s.TimestampMs > newest.TimestampMs || s.TimestampMs == newest.TimestampMs && s.SequenceNumber > newest.SequenceNumber {
			newest = s
		}
	}
	if newest == nil || newest.Summary.Properties[format.SummaryStrategy] != string(engine.Sort) {
		return ""
	}
	return newest.Summary.Properties[format.SummarySortOrder]
}

// renew moves the lease to the new head, records the last-run times so
// far, and checks the lease is still held before the next step. A dry run
// holds no lease and records nothing, nor does a run on a Delta table.
func (m *maintainer) renew(ctx context.Context) error {
	if m.cfg.DryRun || m.lease == nil {
		return nil
	}
	if err := m.lease.Renew(ctx, m.props); err != nil {
		return err
	}
	clear(m.props)
	return nil
}

func (m *maintainer) manifests(ctx context.Context) error {
	start := time.Now()
	tbl, err := catalogs.LoadTable(ctx, m.cat, m.name)
	if err != nil {
		return err
	}
	n, err := manifestCount(ctx, tbl)
	if err != nil {
		return err
	}
	limit := m.p.Manifests.MaxManifests
	if limit < 0 || n <= limit {
		m.rep.step("manifests", StepSkipped, fmt.Sprintf("%d manifests, threshold %d", n, limit), start)
		return nil
	}
	if m.cfg.DryRun {
		m.rep.step("manifests", StepWouldRun, fmt.Sprintf("would merge %d manifests (threshold %d)", n, limit), start)
		return nil
	}
	res, err := RewriteManifests(ctx, m.cat, m.name, ManifestsConfig{TargetSizeBytes: m.p.Manifests.TargetSizeBytes, CommitRetries: m.cfg.CommitRetries, Logger: m.log})
	m.rep.Manifests = res
	if err != nil {
		m.rep.step("manifests", StepFailed, err.Error(), start)
		return err
	}
	if res.NoopReason != "" {
		m.rep.step("manifests", StepNoop, res.NoopReason, start)
		return nil
	}
	m.rep.step("manifests", StepDone, fmt.Sprintf("%d manifests merged into %d (threshold %d)", res.ManifestsBefore, res.ManifestsAfter, limit), start)
	return m.renew(ctx)
}

// due says whether a step with cadence every, last run recorded in the
// property key, should run now, and why (not).
func (m *maintainer) due(ctx context.Context, key string, enabled *bool, every *Duration) (bool, string) {
	if enabled != nil && !*enabled {
		return false, "disabled by the policy"
	}
	tbl, err := catalogs.LoadTable(ctx, m.cat, m.name)
	if err != nil {
		return true, ""
	}
	last, ok := propTime(tbl.Properties(), key)
	ev := time.Duration(*every)
	if !ok || ev <= 0 {
		return true, ""
	}
	if since := time.Since(last); since < ev {
		return false, fmt.Sprintf("last run %s ago (%s), cadence %s", since.Round(time.Second), key, FormatDuration(ev))
	}
	return true, ""
}

func (m *maintainer) expire(ctx context.Context) error {
	start := time.Now()
	if ok, why := m.due(ctx, PropLastExpireMs, m.p.Expire.Enabled, m.p.Expire.Every); !ok {
		m.rep.step("expire", StepSkipped, why, start)
		return nil
	}
	// The lease tag moves to the head first, so it pins nothing.
	if err := m.renew(ctx); err != nil {
		return err
	}
	res, err := Expire(ctx, m.cat, m.name, ExpireConfig{OlderThan: time.Duration(m.p.Expire.OlderThan), RetainLast: m.p.Expire.RetainLast,
		CommitRetries: m.cfg.CommitRetries, Logger: m.log, DryRun: m.cfg.DryRun})
	m.rep.Expire = res
	if err != nil {
		m.rep.step("expire", StepFailed, err.Error(), start)
		return err
	}
	if m.cfg.DryRun {
		m.rep.step("expire", StepWouldRun, fmt.Sprintf("would expire %d snapshots older than %s, freeing %d files (%s)%s",
			len(res.ExpiredSnapshots), FormatDuration(res.OlderThan), len(res.Files), optval.FormatBytes(res.FreedBytes), keptNote(res.Kept)), start)
		return nil
	}
	m.rep.step("expire", StepDone, fmt.Sprintf("%d snapshots older than %s expired, %d files (%s) freed%s",
		len(res.ExpiredSnapshots), FormatDuration(res.OlderThan), len(res.Files), optval.FormatBytes(res.FreedBytes), keptNote(res.Kept)), start)
	m.props[PropLastExpireMs] = strconv.FormatInt(time.Now().UnixMilli(), 10)
	return m.renew(ctx)
}

func (m *maintainer) orphans(ctx context.Context) error {
	start := time.Now()
	if ok, why := m.due(ctx, PropLastOrphansMs, m.p.Orphans.Enabled, m.p.Orphans.Every); !ok {
		m.rep.step("orphans", StepSkipped, why, start)
		return nil
	}
	res, err := RemoveOrphans(ctx, m.cat, m.name, OrphansConfig{OlderThan: time.Duration(m.p.Orphans.OlderThan), Logger: m.log, DryRun: m.cfg.DryRun})
	m.rep.Orphans = res
	if err != nil {
		m.rep.step("orphans", StepFailed, err.Error(), start)
		return err
	}
	if m.cfg.DryRun {
		m.rep.step("orphans", StepWouldRun, fmt.Sprintf("would remove %d unreferenced files older than %s (%s)%s",
			len(res.Files), FormatDuration(res.OlderThan), optval.FormatBytes(res.Bytes), keptNote(res.Kept)), start)
		return nil
	}
	m.rep.step("orphans", StepDone, fmt.Sprintf("%d unreferenced files older than %s removed (%s)%s",
		len(res.Files), FormatDuration(res.OlderThan), optval.FormatBytes(res.Bytes), keptNote(res.Kept)), start)
	// Recorded at release.
	m.props[PropLastOrphansMs] = strconv.FormatInt(time.Now().UnixMilli(), 10)
	return nil
}
