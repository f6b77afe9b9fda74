package main

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/cmd/internal/cli"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/table/optval"
)

func init() { register(newBenchCmd) }

type benchOptions struct {
	g         *globalOptions
	tbl       tableFlags
	layouts   string
	windows   string
	count     int
	area      float64
	placement string
	seed      uint64
	options   []string
	svgDir    string
	keep      bool
	csv       bool
}

func newBenchCmd(g *globalOptions) *cobra.Command {
	o := &benchOptions{g: g}
	cmd := &cobra.Command{
		Use:   "bench (--table NS.T | --delta LOCATION)",
		Short: "Measure how many files bbox queries plan under each layout",
		Long: `Bench writes each layout of the table's current rows into a scratch copy
(NS.T__bench_<layout>, dropped afterwards unless --keep) with the rewrite
engine, then plans every query window with Iceberg's own scan planning and
reports the files planned, against the rows that truly match and the fewest
files any layout with files of that size could open (the lower bound).

Layouts: unsorted (arrival order cut into target-size files), binpack,
linear, zorder, hilbert, str, kd and auto (chosen per group exactly as rewrite
--curve auto chooses without --windows: bench's windows measure the result,
they do not choose it), all written with the same target file size
(default: the table's bytes / 64, at least 64 KiB), and current: the
table's own files as they are, with nothing written. Arrival order is the order rows were
appended in, read from the snapshot history, so unsorted stays the
do-nothing baseline after compactions; when the history cannot give it
(expired snapshots, deleted rows) the current files are copied in sequence
order and a warning says so. The source table is only read. By default
bench measures current, unsorted, binpack, linear, zorder, hilbert and kd.

With --delta, the table is a Delta table (a directory, file: URL or
s3://BUCKET/PREFIX) and its latest version is measured, with the same flags
and output. Its live rows (deletion vectors applied, column mapping
honoured) are copied into scratch Iceberg tables in a temporary catalog,
removed afterwards (so --keep does not apply), and every layout but current
is written and planned exactly as for an Iceberg table of the same rows.
Current is the Delta files as they are, planned by their own statistics: a
file is opened for a window its bbox columns' minimum and maximum meet, as
metrics --delta counts. Arrival order is the order commits added the rows
(version, then position in the commit, then row), read from the log's
appends, so OPTIMIZE commits do not change it; when the log cannot give it
(cleaned-up commits, deletes, vacuumed files) the current files are read in
the order they were committed and a warning says so. The Delta table needs
the four bbox columns bbox_minx, bbox_miny, bbox_maxx and bbox_maxy, and is
never written.`,
		Example: `  $ geocompact bench --table demo.pings
  $ geocompact bench --table demo.pings --layouts current,unsorted,hilbert
  $ geocompact bench --table demo.pings --layouts zorder,hilbert --window-area 0.001 --svg pics/
  $ geocompact bench --table demo.pings --layouts hilbert --option normalize=quantile --json
  $ geocompact bench --table demo.pings --windows queries.json --csv
  $ geocompact bench --delta ./lake/pings --layouts current,unsorted,hilbert`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := o.config()
			if err != nil {
				return err
			}
			return runBench(cmd.Context(), o, cfg)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.tbl.name, "table", "", "table to measure, NAMESPACE.TABLE (only read)")
	f.StringVar(&o.tbl.location, "delta", "", "Delta table to measure: a directory, file: URL or s3://BUCKET/PREFIX (only read)")
	f.StringVar(&o.layouts, "layouts", bench.JoinLayouts(bench.AllLayouts, ","), "layouts to measure, comma-separated: "+bench.JoinLayouts(bench.KnownLayouts, ", "))
	f.StringVar(&o.windows, "windows", "", `JSON file of windows [{"minx":..,"miny":..,"maxx":..,"maxy":..}, ...] (default: generated)`)
	f.IntVar(&o.count, "window-count", bench.DefaultWindowCount, "number of generated windows")
	f.Float64Var(&o.area, "window-area", bench.DefaultWindowArea, "area of each generated window as a fraction of the extent's")
	f.StringVar(&o.placement, "window-placement", string(bench.PlaceData), "where generated windows go: data (centred on random rows) or uniform")
	f.Uint64Var(&o.seed, "seed", 1, "seed of the generated windows")
	f.StringArrayVar(&o.options, "option", nil, "rewrite option K=V by Iceberg's name, for every layout (repeatable)")
	f.StringVar(&o.svgDir, "svg", "", "write one SVG picture per layout into this directory")
	f.BoolVar(&o.keep, "keep", false, "keep the scratch tables (not with --delta)")
	f.BoolVar(&o.csv, "csv", false, "write one CSV row per layout")
	cmd.MarkFlagsOneRequired("table", "delta")
	cmd.MarkFlagsMutuallyExclusive("table", "delta")
	return cmd
}

// config checks the flags and builds the bench config before anything is
// opened.
func (o *benchOptions) config() (bench.Config, error) {
	if o.csv && o.g.JSON {
		return bench.Config{}, usageErrorf("--csv and --json exclude each other")
	}
	if o.keep && o.tbl.ref().IsDelta() {
		return bench.Config{}, usageErrorf("--keep does not apply to --delta: a Delta table's scratch copies live in a temporary catalog that is always removed")
	}
	layouts, err := bench.ParseLayouts(o.layouts)
	if err != nil {
		return bench.Config{}, usageErrorf("--layouts: %w", err)
	}
	kv, err := parseKV(o.options)
	if err != nil {
		return bench.Config{}, err
	}
	if _, err := (engine.Request{Options: kv}).OptionsFor(nil); err != nil {
		return bench.Config{}, &usageError{err}
	}
	cfg := bench.Config{Table: o.tbl.name, Layouts: layouts, Options: kv, Keep: o.keep, Logger: o.g.Logger()}
	if o.windows != "" {
		cfg.Windows, err = readWindowsFile(o.windows)
		return cfg, err
	}
	placement, err := bench.ParsePlacement(o.placement)
	if err != nil {
		return cfg, usageErrorf("--window-placement: %w", err)
	}
	if o.count <= 0 {
		return cfg, usageErrorf("--window-count %d: want a positive number", o.count)
	}
	cfg.WindowConfig = bench.WindowConfig{Count: o.count, Area: o.area, Placement: placement, Seed: o.seed}
	if err := cfg.WindowConfig.Validate(); err != nil {
		return cfg, usageErrorf("%w", err)
	}
	return cfg, nil
}

func runBench(ctx context.Context, o *benchOptions, cfg bench.Config) error {
	rep, err := measureLayouts(ctx, o, cfg)
	if err != nil {
		if errors.Is(err, optval.ErrBad) {
			return &usageError{err}
		}
		return err
	}
	if o.svgDir != "" {
		paths, err := bench.WriteSVGs(o.svgDir, rep)
		if err != nil {
			return err
		}
		for _, path := range paths {
			o.g.Logger().Info("bench svg written", "path", path)
		}
	}
	switch {
	case o.g.JSON:
		return cli.WriteJSON(o.g.IO.Out, rep)
	case o.csv:
		return writeBenchCSV(o.g.IO.Out, rep)
	}
	return writeBenchTable(o.g, rep, o.rewriteHint(rep))
}

// measureLayouts runs the bench of the --table or --delta table.
func measureLayouts(ctx context.Context, o *benchOptions, cfg bench.Config) (*bench.Report, error) {
	p := newProgress(o.g, "bench", "layouts")
	cfg.Progress = p.Update
	defer p.Done()
	t, err := o.g.openTable(ctx, o.tbl.ref(), toDescribe)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	return bench.Measure(ctx, t.Table, cfg)
}

// benchColumns are the per-layout figures of the table and CSV forms, in
// order.
var benchColumns = []string{"layout", "files", "bytes", "mean_files_planned", "median_files_planned", "p95_files_planned",
	"mean_bytes_planned", "mean_files_with_matches", "mean_lower_bound", "ratio_to_lower_bound", "mean_overlap_depth", "max_overlap_depth",
	"row_groups", "row_group_area", "mean_row_groups_read", "mean_row_group_bytes_read"}

func benchRow(lr bench.LayoutReport, human bool) []string {
	ratio := ""
	if lr.RatioToLowerBound != nil {
		ratio = strconv.FormatFloat(*lr.RatioToLowerBound, 'f', 3, 64)
	}
	f := func(v float64, prec int) string { return strconv.FormatFloat(v, 'f', prec, 64) }
	area := ""
	if lr.RowGroupArea != nil {
		area = f(*lr.RowGroupArea, 3)
	}
	return []string{string(lr.Layout), strconv.Itoa(lr.Files), cli.FormatBytes(lr.Bytes, human),
		f(lr.MeanFilesPlanned, 2), f(lr.MedianFilesPlanned, 1), f(lr.P95FilesPlanned, 0),
		cli.FormatBytes(int64(lr.MeanBytesPlanned), human), f(lr.MeanFilesWithMatches, 2), f(lr.MeanLowerBound, 2), ratio,
		f(lr.MeanOverlapDepth, 2), strconv.Itoa(lr.MaxOverlapDepth),
		strconv.Itoa(lr.RowGroups), area, f(lr.MeanRowGroupsRead, 2), cli.FormatBytes(int64(lr.MeanRowGroupBytesRead), human)}
}

func writeBenchCSV(w io.Writer, rep *bench.Report) error {
	cw := csv.NewWriter(w)
	_ = cw.Write(append([]string{"table", "windows"}, benchColumns...))
	for _, lr := range rep.Layouts {
		_ = cw.Write(append([]string{rep.Table, strconv.Itoa(rep.Windows)}, benchRow(lr, false)...))
	}
	cw.Flush()
	return cw.Error()
}

// rewriteHint is the rewrite that writes the layout bench measured with
// the fewest files planned, at the target file size it measured with; ""
// when no curve layout was measured.
func (o *benchOptions) rewriteHint(rep *bench.Report) string {
	var best *bench.LayoutReport
	for i, lr := range rep.Layouts {
		switch lr.Layout {
		case bench.Current, bench.Unsorted, bench.BinPack:
			continue
		}
		if best == nil || lr.MeanFilesPlanned < best.MeanFilesPlanned {
			best = &rep.Layouts[i]
		}
	}
	if best == nil {
		return ""
	}
	target := o.tbl.flag()
	return fmt.Sprintf("to write %s as measured (%.2f files planned per window, at %s files): geocompact rewrite %s --curve %s --option %s=%d --option %s=true",
		best.Layout, best.MeanFilesPlanned, cli.FormatBytes(rep.TargetFileSize, true), target, best.Layout, engine.OptTargetFileSize, rep.TargetFileSize, engine.OptRewriteAll)
}

func writeBenchTable(g *globalOptions, rep *bench.Report, hint string) error {
	w := tabwriter.NewWriter(g.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "LAYOUT\tFILES\tBYTES\tMEAN PLANNED\tMEDIAN\tP95\tMEAN BYTES PLANNED\tWITH MATCHES\tLOWER BOUND\tRATIO\tOVERLAP MEAN\tOVERLAP MAX\tROW GROUPS\tRG AREA\tRG READ\tRG BYTES READ")
	for _, lr := range rep.Layouts {
		row := benchRow(lr, g.IO.OutTTY)
		for _, i := range []int{9, 13} {
			if row[i] == "" {
				row[i] = "-"
			}
		}
		for i, c := range row {
			sep := "\t"
			if i == len(row)-1 {
				sep = "\n"
			}
			fmt.Fprint(w, c, sep)
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if g.IO.ErrTTY {
		how := "from --windows"
		if rep.WindowArea > 0 {
			how = fmt.Sprintf("of %.3g%% of the extent, %s placement, seed %d", rep.WindowArea*100, rep.Placement, rep.Seed)
		}
		fmt.Fprintf(g.IO.ErrOut, "%s: %d rows, %d windows %s, target file size %s, filter on %s, arrival order from %s\n",
			rep.Table, rep.Rows, rep.Windows, how, cli.FormatBytes(rep.TargetFileSize, true), rep.Filter, rep.ArrivalOrder)
		if hint != "" {
			fmt.Fprintln(g.IO.ErrOut, hint)
		}
	}
	return nil
}
