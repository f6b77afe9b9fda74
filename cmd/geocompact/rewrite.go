package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/cluster"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/engine/where"
	"github.com/geocompact/geocompact/spatial"
)

func init() { register(newRewriteCmd) }

type rewriteOptions struct {
	g        *globalOptions
	table    string
	strategy string
	curve    string
	order    string
	where    string
	options  []string
	dryRun   bool
	// allowChange lets an explicit layout replace the table's recorded one.
	allowChange bool
	windows     string
}

func newRewriteCmd(g *globalOptions) *cobra.Command {
	o := &rewriteOptions{g: g}
	cmd := &cobra.Command{
		Use:   "rewrite --table NS.T",
		Short: "Compact a table's data files, optionally clustered by a spatial curve",
		Long: `Rewrite does what Iceberg's rewrite_data_files procedure does: it rewrites small
(and oversized) data files into files of the target size and commits them as
one replace snapshot. With --curve or --sort-order (strategy sort) the rows of
each file group are ordered by that key across the whole group, so bbox
queries open few files. Row count, bbox extent and a content checksum are
verified before anything is committed.

Without --strategy, --curve and --sort-order the table's recorded layout
applies (see geocompact alter: the ` + engine.PropLayout + ` property, else the
Iceberg sort order, else binpack), with the table's
write.target-file-size-bytes. A layout that differs from the recorded one
is refused unless --allow-layout-change is given.

--curve auto picks, for each file group, the layout that a sample of the
group's row boxes predicts plans the fewest files for query windows (by
default data-placed windows of 0.1% and 1% of the extent; --windows FILE
for your own); --dry-run prints every candidate's estimate, and the
snapshot summary records the choice (` + engine.SummaryAuto + `).

Options take Iceberg's names (--option K=V, repeatable): ` + strings.Join(engine.KnownOptions(), ", ") + `.`,
		Example: `  $ geocompact rewrite --table gis.telemetry --curve hilbert --dry-run
  $ geocompact rewrite --table gis.telemetry --curve hilbert --option target-file-size-bytes=134217728
  $ geocompact rewrite --table gis.telemetry --where "ts >= '2026-01-02' AND ts < '2026-01-03'"
  $ geocompact rewrite --table gis.parcels --sort-order 'zorder(bbox_minx, bbox_miny)' --json
  $ geocompact rewrite --table gis.telemetry --curve auto --dry-run
  $ geocompact rewrite --table gis.telemetry --strategy binpack --allow-layout-change`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := o.config()
			if err != nil {
				return err
			}
			return runRewrite(cmd.Context(), o, cfg)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.table, "table", "", "table to rewrite, NAMESPACE.TABLE (required)")
	f.StringVar(&o.strategy, "strategy", "", "binpack or sort (default binpack; --curve and --sort-order imply sort)")
	f.StringVar(&o.curve, "curve", "", "cluster rows by a curve over their bbox: linear, zorder, hilbert, str (sort-tile-recursive) or auto (chosen per group by estimate)")
	f.StringVar(&o.order, "sort-order", "", "sort order: 'col [ASC|DESC] [NULLS FIRST|LAST], ...', 'zorder(a, b)' or 'hilbert(a, b)'")
	f.StringVar(&o.where, "where", "", "rewrite only files that may hold matching rows, e.g. \"ts >= now() - interval '1 day'\" or 'bbox(0, 40, 10, 50)' (minx > maxx crosses the antimeridian); timestamps are UTC unless they carry an offset")
	f.StringArrayVar(&o.options, "option", nil, "rewrite option K=V by Iceberg's name (repeatable)")
	f.BoolVar(&o.dryRun, "dry-run", false, "print the plan (groups, files, bytes, skipped files and why) and write nothing")
	f.BoolVar(&o.allowChange, "allow-layout-change", false, "rewrite with the given strategy, curve or sort order even when the table records a different layout")
	f.StringVar(&o.windows, "windows", "", `with --curve auto: JSON file of windows to choose for, [{"minx":..,"miny":..,"maxx":..,"maxy":..}, ...]`)
	_ = cmd.MarkFlagRequired("table")
	return cmd
}

// config checks the flags and builds the engine's config. Option names and
// values are checked here, before the catalog is opened.
func (o *rewriteOptions) config() (engine.Request, error) {
	kv, err := parseKV(o.options)
	if err != nil {
		return engine.Request{}, err
	}
	if _, err := engine.ParseOptions(kv, nil); err != nil {
		return engine.Request{}, &usageError{err}
	}
	if err := checkOrder(o.curve, o.order); err != nil {
		return engine.Request{}, err
	}
	switch engine.Strategy(o.strategy) {
	case "", engine.BinPack, engine.Sort:
	default:
		return engine.Request{}, usageErrorf("--strategy %q: want binpack or sort", o.strategy)
	}
	req := engine.Request{
		Strategy: engine.Strategy(o.strategy), Curve: o.curve, SortOrder: o.order, Where: o.where,
		Options: kv, DryRun: o.dryRun, AllowLayoutChange: o.allowChange, Logger: o.g.Logger(),
	}
	if o.windows != "" {
		if !strings.EqualFold(o.curve, engine.CurveAuto) {
			return req, usageErrorf("--windows chooses the layout of --curve auto; add --curve auto or drop --windows")
		}
		ws, err := readWindowsFile(o.windows)
		if err != nil {
			return req, err
		}
		req.AutoWindows = []cluster.WindowSet{{Name: filepath.Base(o.windows), Windows: ws}}
	}
	return req, nil
}

// readWindowsFile reads a --windows file (bench.ReadWindows' format); a
// file that cannot be read or parsed is a usage error.
func readWindowsFile(path string) ([]spatial.Bound, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, usageErrorf("--windows: %w", err)
	}
	defer f.Close()
	ws, err := bench.ReadWindows(f)
	if err != nil {
		return nil, usageErrorf("--windows %s: %w", path, err)
	}
	return ws, nil
}

// checkOrder checks the syntax of --curve and --sort-order before anything
// is opened; a mistake is a usage error.
func checkOrder(curve, order string) error {
	if curve != "" {
		if _, _, err := engine.ParseCurve(curve); err != nil {
			return usageErrorf("--curve: %w", err)
		}
	}
	if order != "" {
		if _, err := cluster.ParseOrder(order); err != nil {
			return usageErrorf("--sort-order: %w", err)
		}
	}
	return nil
}

// parseKV parses repeated K=V flags; a bare K (a boolean option set to
// true) has the empty value.
func parseKV(pairs []string) (map[string]string, error) {
	kv := map[string]string{}
	for _, p := range pairs {
		k, v, _ := strings.Cut(p, "=")
		if strings.TrimSpace(k) == "" {
			return nil, usageErrorf("--option %q: want KEY=VALUE", p)
		}
		kv[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return kv, nil
}

func runRewrite(ctx context.Context, o *rewriteOptions, cfg engine.Request) error {
	cat, spec, err := o.g.openCatalog(ctx)
	if err != nil {
		return err
	}
	cfg.CommitRetries = spec.Retries()
	limitMemory(cfg.Options)
	p := newProgress(o.g, "rewrite", "")
	cfg.Progress = rewriteProgress(p)
	res, err := engine.Rewrite(ctx, cat, o.table, cfg)
	p.Done()
	if err != nil && res == nil {
		if errors.Is(err, engine.ErrOption) || errors.Is(err, where.ErrInvalid) || errors.Is(err, engine.ErrLayoutChange) {
			return &usageError{err}
		}
		return err
	}
	if werr := writeRewriteResult(o.g, res); werr != nil && err == nil {
		err = werr
	}
	return err
}

func writeRewriteResult(g *globalOptions, res *engine.Result) error {
	if g.JSON {
		enc := json.NewEncoder(g.IO.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	out := g.IO.Out
	human := g.IO.OutTTY
	if res.DryRun {
		if err := writePlan(out, res.Plan, human); err != nil {
			return err
		}
	}
	if err := writeAutoChoices(out, res.Auto); err != nil {
		return err
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "REWRITTEN FILES\tADDED FILES\tREWRITTEN BYTES\tFAILED FILES\tREMOVED DELETE FILES\tFILES BEFORE\tFILES AFTER\tBYTES BEFORE\tBYTES AFTER\tSNAPSHOTS\tDURATION")
	fmt.Fprintf(w, "%d\t%d\t%s\t%d\t%d\t%d\t%d\t%s\t%s\t%d\t%s\n",
		res.RewrittenDataFilesCount, res.AddedDataFilesCount, formatBytes(res.RewrittenBytesCount, human),
		res.FailedDataFilesCount, res.RemovedDeleteFilesCount, res.FilesBefore, res.FilesAfter,
		formatBytes(res.BytesBefore, human), formatBytes(res.BytesAfter, human), res.SnapshotsCommitted,
		res.Duration.Round(time.Millisecond))
	if err := w.Flush(); err != nil {
		return err
	}
	switch {
	case res.NoopReason != "":
		_, err := fmt.Fprintf(out, "nothing rewritten: %s\n", res.NoopReason)
		return err
	case res.DryRun:
		_, err := fmt.Fprintf(out, "dry run: %d groups, %d files, %s would be rewritten (%s); nothing was written\n",
			len(res.Plan.Groups), res.Plan.Files(), formatBytes(res.Plan.Bytes(), true), res.LayoutText())
		return err
	}
	verified := "verified: rows, bbox extent and content checksum unchanged"
	if !res.Verified {
		verified = "not all groups committed; see the error"
	}
	_, err := fmt.Fprintf(out, "%s; %s\n", res.LayoutText(), verified)
	return err
}

// strategyText says how a rewrite laid the table out (see
// engine.Result.LayoutText).
func strategyText(res *engine.Result) string { return res.LayoutText() }

// writeAutoChoices prints what --curve auto estimated for each group:
// one row per candidate, its mean files planned per window set, and the
// pick.
func writeAutoChoices(out io.Writer, choices []engine.AutoChoice) error {
	if len(choices) == 0 {
		return nil
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	head := "GROUP\tPARTITION\tFILES\tSAMPLE ROWS\tCANDIDATE"
	for _, name := range choices[0].Windows {
		head += "\tFILES PLANNED (" + name + " WINDOWS)"
	}
	fmt.Fprintln(w, head+"\tSCORE\tCHOSEN")
	for _, c := range choices {
		for _, e := range c.Estimates {
			row := fmt.Sprintf("%d\t%s\t%d\t%d\t%s", c.Group, orDash(c.Partition), c.Files, c.Sample, e.Curve)
			for _, p := range e.Planned {
				row += fmt.Sprintf("\t%.2f", p)
			}
			chosen := ""
			if e.Curve == c.Curve {
				chosen = "*"
			}
			fmt.Fprintf(w, "%s\t%.2f\t%s\n", row, e.Score, chosen)
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(out)
	return err
}

// writePlan prints the groups and the skipped files with their reasons.
func writePlan(out io.Writer, p *engine.Plan, human bool) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "GROUP\tPARTITION\tFILES\tBYTES\tRECORDS\tOUTPUT FILES\tSORT\tPEAK MEMORY\tREASON")
	for i, g := range p.Groups {
		fmt.Fprintf(w, "%d\t%s\t%d\t%s\t%d\t%d\t%s\t%s\t%s\n", i+1, orDash(g.Partition), len(g.Files), formatBytes(g.Bytes, human), g.Records, g.OutputFiles,
			sortText(g.Sort, human), peakText(g.Sort, human), g.Reason)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if len(p.Skipped) > 0 {
		fmt.Fprintln(out)
		w = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "SKIPPED FILE\tPARTITION\tBYTES\tREASON")
		for _, s := range p.Skipped {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", s.Path, orDash(s.Partition), formatBytes(s.Size, human), s.Reason)
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintln(out)
	return err
}

// sortText says how a group is sorted: in memory, or spilled into so many
// buckets and bytes of local disk.
func sortText(sp *engine.SortPlan, human bool) string {
	switch {
	case sp == nil:
		return "-"
	case !sp.Spill:
		return "in memory"
	}
	return fmt.Sprintf("spill: %d buckets, %s", sp.Buckets, formatBytes(sp.SpillBytes, human))
}

func peakText(sp *engine.SortPlan, human bool) string {
	if sp == nil {
		return "-"
	}
	return formatBytes(sp.PeakMemoryBytes, human)
}

// limitMemory sets the Go runtime's soft memory limit to the rewrite's
// memory budget plus room for the runtime, unless GOMEMLIMIT is set, so
// that the garbage collector keeps the process near its budget instead of
// letting the heap double between collections.
func limitMemory(options map[string]string) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	budget := engine.DefaultMemoryBudget()
	if v, ok := options[engine.OptMaxGroupMemory]; ok {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 {
			budget = n
		}
	}
	debug.SetMemoryLimit(budget + memoryLimitRoom)
}

// memoryLimitRoom is what the process may use beyond the groups' budget:
// the runtime, the catalog and the scan machinery.
const memoryLimitRoom = 64 << 20

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
