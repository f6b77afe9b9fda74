package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/geocompact/geocompact/cluster"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/engine/spill"
	"github.com/geocompact/geocompact/engine/where"
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

Options take Iceberg's names (--option K=V, repeatable): ` + strings.Join(engine.KnownOptions(), ", ") + `.`,
		Example: `  $ geocompact rewrite --table gis.telemetry --curve hilbert --dry-run
  $ geocompact rewrite --table gis.telemetry --curve hilbert --option target-file-size-bytes=134217728
  $ geocompact rewrite --table gis.telemetry --where "ts >= '2026-01-02' AND ts < '2026-01-03'"
  $ geocompact rewrite --table gis.parcels --sort-order 'zorder(bbox_minx, bbox_miny)' --json`,
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
	f.StringVar(&o.curve, "curve", "", "cluster rows by a curve over their bbox: linear, zorder, hilbert or str (sort-tile-recursive)")
	f.StringVar(&o.order, "sort-order", "", "sort order: 'col [ASC|DESC] [NULLS FIRST|LAST], ...', 'zorder(a, b)' or 'hilbert(a, b)'")
	f.StringVar(&o.where, "where", "", "rewrite only files that may hold matching rows, e.g. \"ts >= '2026-01-02'\" or 'bbox(0, 40, 10, 50)'; timestamps are UTC unless they carry an offset")
	f.StringArrayVar(&o.options, "option", nil, "rewrite option K=V by Iceberg's name (repeatable)")
	f.BoolVar(&o.dryRun, "dry-run", false, "print the plan (groups, files, bytes, skipped files and why) and write nothing")
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
	return engine.Request{
		Strategy: engine.Strategy(o.strategy), Curve: o.curve, SortOrder: o.order, Where: o.where,
		Options: kv, DryRun: o.dryRun, Logger: o.g.Logger(),
	}, nil
}

// checkOrder checks the syntax of --curve and --sort-order before anything
// is opened; a mistake is a usage error.
func checkOrder(curve, order string) error {
	if curve != "" {
		if _, err := cluster.CurveOrder(curve); err != nil {
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
		if errors.Is(err, engine.ErrOption) || errors.Is(err, where.ErrInvalid) {
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
			len(res.Plan.Groups), res.Plan.Files(), formatBytes(res.Plan.Bytes(), true), strategyText(res))
		return err
	}
	verified := "verified: rows, bbox extent and content checksum unchanged"
	if !res.Verified {
		verified = "not all groups committed; see the error"
	}
	_, err := fmt.Fprintf(out, "%s; %s\n", strategyText(res), verified)
	return err
}

func strategyText(res *engine.Result) string {
	if res.SortOrder != "" {
		return fmt.Sprintf("strategy %s by %s", res.Strategy, res.SortOrder)
	}
	return "strategy " + res.Strategy
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
	budget := spill.DefaultMemoryBudget()
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
