package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/spf13/cobra"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/cmd/internal/cli"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/table/icebergtable"
	"github.com/geocompact/geocompact/table/optval"
	"github.com/geocompact/geocompact/validate"
	"github.com/geocompact/geocompact/validate/tablecheck"
)

func init() { register(newQuickstartCmd) }

type quickstartOptions struct {
	g       *globalOptions
	table   string
	rows    int64
	commits int
	files   int
	windows int
}

func newQuickstartCmd(g *globalOptions) *cobra.Command {
	o := &quickstartOptions{g: g}
	cmd := &cobra.Command{
		Use:   "quickstart",
		Short: "Build a fragmented demo table, compact it with a Hilbert curve and show the difference",
		Long: `Quickstart shows what geocompact does, in the embedded warehouse: it generates
a table of clustered GPS-like points the way streaming ingest leaves one
(many small commits, every file spanning the whole map), compacts it with
--curve hilbert into about 64 files (bench's default target file size),
verifies that the data is unchanged, and prints files, sizes and the mean
number of files a bbox query of 1% of the extent (bench's default window)
plans, before and after. It replaces its demo table each time it runs,
deleting the replaced table's files. It ends with a next step to run right
away, and the commands for your own data: ingest, bench and alter.`,
		Example: `  $ geocompact quickstart
  $ geocompact quickstart --rows 200000 --commits 50`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.rows <= 0 || o.commits <= 0 || int64(o.commits) > o.rows || o.files <= 0 || o.windows <= 0 {
				return usageErrorf("--rows, --commits, --files and --windows must be positive, with commits <= rows")
			}
			return runQuickstart(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.table, "table", "demo.pings", "demo table to (re)create")
	f.Int64Var(&o.rows, "rows", 1_000_000, "rows in the demo table")
	f.IntVar(&o.commits, "commits", 200, "append commits the rows arrive in")
	f.IntVar(&o.files, "files", bench.DefaultTargetFiles, "about how many files to compact into (target file size: the table's bytes / files, at least 64 KiB)")
	f.IntVar(&o.windows, "windows", 20, "sample bbox windows to plan")
	return cmd
}

// quickstartSide is the state of the demo table at one point.
type quickstartSide struct {
	bench.Planning
	AvgFileBytes      int64   `json:"avg_file_bytes"`
	Snapshots         int     `json:"snapshots"`
	WindowAreaPercent float64 `json:"window_area_percent"`
}

type quickstartResult struct {
	Table string `json:"table"`
	Rows  int64  `json:"rows"`
	// ValidatedRows is how many rows passed geometry validation.
	ValidatedRows int64           `json:"validated_rows"`
	Before        quickstartSide  `json:"before"`
	After         quickstartSide  `json:"after"`
	Rewrite       *engine.Result  `json:"rewrite"`
	Windows       []spatial.Bound `json:"windows"`
	Duration      time.Duration   `json:"duration_ns"`
	Steps         []quickstepTime `json:"steps"`
}

type quickstepTime struct {
	Step     string        `json:"step"`
	Duration time.Duration `json:"duration_ns"`
}

// quickstartWindowArea is the windows' area, bench's default.
const quickstartWindowArea = bench.DefaultWindowArea

func runQuickstart(ctx context.Context, o *quickstartOptions) error {
	start := time.Now()
	cat, spec, err := o.g.openCatalog(ctx)
	if err != nil {
		return err
	}
	res := &quickstartResult{Table: o.table}
	say := func(format string, args ...any) {
		if !o.g.JSON {
			fmt.Fprintf(o.g.IO.ErrOut, format+"\n", args...)
		}
	}
	step := func(name string, t0 time.Time) {
		res.Steps = append(res.Steps, quickstepTime{name, time.Since(t0)})
	}

	t0 := time.Now()
	if err := purgeDemoTable(ctx, cat, o.table); err != nil {
		return err
	}
	say("1/4 generating %s: %d clustered points in %d commits (arrival order)...", o.table, o.rows, o.commits)
	p := newProgress(o.g, "generate", "commits")
	gen, err := bench.Generate(ctx, cat, bench.GenerateConfig{
		Table: o.table, Rows: o.rows, Commits: o.commits, Distribution: bench.Clustered, Seed: 1, Replace: true, Progress: p.Update,
	})
	p.Done()
	if err != nil {
		return err
	}
	res.Rows = gen.Rows
	step("generate", t0)

	t0 = time.Now()
	say("2/4 validating every file's geometry, then measuring files, sizes and files planned for %d bbox windows of %.1f%% of the extent...", o.windows, 100*quickstartWindowArea)
	if err := quickstartValidate(ctx, cat, o.table, res); err != nil {
		return err
	}
	step("validate", t0)
	t0 = time.Now()
	if err := quickstartMeasureBefore(ctx, cat, o, gen.Extent, res); err != nil {
		return err
	}
	step("measure", t0)

	t0 = time.Now()
	target := max(res.Before.Bytes/int64(o.files), bench.MinDefaultTargetFileSize)
	say("3/4 compacting with --curve hilbert into files of about %s...", optval.FormatBytes(target))
	t, err := icebergtable.Open(ctx, cat, o.table)
	if err != nil {
		return err
	}
	rw, err := engine.Rewrite(ctx, t, engine.Request{
		Curve: "hilbert", CommitRetries: spec.Retries(), Logger: o.g.Logger(),
		Options: map[string]string{engine.OptTargetFileSize: fmt.Sprint(target)},
	})
	if err != nil {
		return err
	}
	res.Rewrite = rw
	step("rewrite", t0)

	t0 = time.Now()
	say("4/4 measuring again...")
	tbl, err := catalogs.LoadTable(ctx, cat, o.table)
	if err != nil {
		return err
	}
	if res.After, err = measureSide(ctx, tbl, res.Windows); err != nil {
		return err
	}
	step("measure", t0)
	res.Duration = time.Since(start)
	if o.g.JSON {
		return cli.WriteJSON(o.g.IO.Out, res)
	}
	return writeQuickstart(o.g.IO.Out, res, quickstartNext(o))
}

// purgeDemoTable drops the demo table of an earlier run and deletes its
// files, so reruns leave no orphans behind.
func purgeDemoTable(ctx context.Context, cat catalog.Catalog, name string) error {
	tbl, err := catalogs.LoadTable(ctx, cat, name)
	if errors.Is(err, catalog.ErrNoSuchTable) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := cat.DropTable(ctx, tbl.Identifier()); err != nil && !errors.Is(err, catalog.ErrNoSuchTable) {
		return fmt.Errorf("drop the earlier demo table %s: %w", name, err)
	}
	if err := tbl.PurgeFiles(ctx); err != nil {
		return fmt.Errorf("delete the files of the earlier demo table %s: %w", name, err)
	}
	return nil
}

// quickstartNext is the command to run right after quickstart, with the
// flags that select the same warehouse or catalog.
func quickstartNext(o *quickstartOptions) string {
	exe, _ := os.Executable()
	cmd := invokedAs(exe)
	if o.g.Warehouse != catalogs.DefaultWarehouse {
		cmd += " --warehouse " + shellQuote(o.g.Warehouse)
	}
	if o.g.Catalog != "" {
		cmd += " --catalog " + shellQuote(o.g.Catalog)
	}
	if o.g.Config != "" {
		cmd += " --config " + shellQuote(o.g.Config)
	}
	return cmd
}

// invokedAs is how to run this program again: "geocompact", or, for a
// binary `go run` built into its build cache (exe, which `go run` leaves
// nowhere on the PATH), "go run ./cmd/geocompact".
func invokedAs(exe string) string {
	if strings.Contains(filepath.ToSlash(exe), "/go-build") && strings.Contains(filepath.ToSlash(exe), "/exe/") {
		return "go run ./cmd/geocompact"
	}
	return "geocompact"
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '-' || r == '_' || r == ':' || r == '=' || unicode.IsLetter(r) || unicode.IsDigit(r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// quickstartValidate validates every row of the demo table's geometry.
func quickstartValidate(ctx context.Context, cat catalog.Catalog, name string, res *quickstartResult) error {
	tbl, err := icebergtable.Load(ctx, cat, name)
	if err != nil {
		return err
	}
	rep, err := tablecheck.Check(ctx, tbl.Describe(), validate.DefaultConfig())
	if err != nil {
		return err
	}
	if !rep.OK() {
		return fmt.Errorf("quickstart: the demo table has %d geometry violations (%v)", rep.Total.Violations(), rep.Total.Codes())
	}
	res.ValidatedRows = rep.Total.Rows
	return nil
}

// quickstartMeasureBefore draws the windows and measures the table before
// compaction.
func quickstartMeasureBefore(ctx context.Context, cat catalog.Catalog, o *quickstartOptions, extent spatial.Bound, res *quickstartResult) error {
	tbl, err := catalogs.LoadTable(ctx, cat, o.table)
	if err != nil {
		return err
	}
	if res.Windows, err = quickstartWindows(ctx, tbl, extent, o.windows); err != nil {
		return err
	}
	res.Before, err = measureSide(ctx, tbl, res.Windows)
	return err
}

// quickstartWindows draws data-placed windows around a sample of the
// table's rows.
func quickstartWindows(ctx context.Context, tbl *table.Table, extent spatial.Bound, n int) ([]spatial.Bound, error) {
	rows, err := bench.SampleRows(ctx, tbl, 97)
	if err != nil {
		return nil, err
	}
	return bench.GenerateWindows(bench.WindowConfig{Count: n, Area: quickstartWindowArea, Placement: bench.PlaceData, Seed: 1}, extent, rows)
}

// measureSide is bench's planning measure of the table, with its snapshot
// count.
func measureSide(ctx context.Context, tbl *table.Table, windows []spatial.Bound) (quickstartSide, error) {
	p, err := bench.MeasurePlanning(ctx, tbl, windows)
	if err != nil {
		return quickstartSide{}, err
	}
	s := quickstartSide{Planning: *p, Snapshots: len(tbl.Metadata().Snapshots()), WindowAreaPercent: 100 * quickstartWindowArea}
	if s.Files > 0 {
		s.AvgFileBytes = s.Bytes / int64(s.Files)
	}
	return s, nil
}

func writeQuickstart(out io.Writer, r *quickstartResult, cmd string) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "%s (%d rows)\tBEFORE\tAFTER\t\n", r.Table, r.Rows)
	fmt.Fprintf(w, "data files\t%d\t%d\t\n", r.Before.Files, r.After.Files)
	fmt.Fprintf(w, "average file size\t%s\t%s\t\n", cli.FormatBytes(r.Before.AvgFileBytes, true), cli.FormatBytes(r.After.AvgFileBytes, true))
	fmt.Fprintf(w, "total size\t%s\t%s\t\n", cli.FormatBytes(r.Before.Bytes, true), cli.FormatBytes(r.After.Bytes, true))
	fmt.Fprintf(w, "files planned per bbox query (mean of %d)\t%.1f\t%.1f\t\n", len(r.Windows), r.Before.MeanFilesPlanned, r.After.MeanFilesPlanned)
	fmt.Fprintf(w, "bytes planned per bbox query (mean)\t%s\t%s\t\n", cli.FormatBytes(int64(r.Before.MeanBytesPlanned), true), cli.FormatBytes(int64(r.After.MeanBytesPlanned), true))
	if err := w.Flush(); err != nil {
		return err
	}
	verified := "verified: row count, bbox extent and content checksum unchanged"
	if !r.Rewrite.Verified {
		verified = "NOT verified"
	}
	fmt.Fprintf(out, "\nvalidated: %d rows, no geometry violations.\n", r.ValidatedRows)
	fmt.Fprintf(out, "rewrite: %d files -> %d, one replace snapshot, sorted along a Hilbert curve over the bounding boxes; %s.\n",
		r.Rewrite.RewrittenDataFilesCount, r.Rewrite.AddedDataFilesCount, verified)
	fmt.Fprintf(out, "done in %s.\n\n", r.Duration.Round(100*time.Millisecond))
	fmt.Fprintf(out, "next: compare layouts on the demo table, measured the same way:\n  %s bench --table %s\n", cmd, r.Table)
	fmt.Fprintf(out, "the replaced files stay for time travel until snapshots expire (after an hour):\n  %s expire --table %s --older-than 1h\n\n", cmd, r.Table)
	fmt.Fprintf(out, "for your own data:\n")
	fmt.Fprintf(out, "  %s ingest --table NS.T --create --add-bbox FILE.parquet   append validated GeoParquet\n", cmd)
	fmt.Fprintf(out, "  %s bench --table NS.T                                     which layout prunes best\n", cmd)
	fmt.Fprintf(out, "  %s alter --table NS.T --curve hilbert                     record it as the table's layout\n", cmd)
	return nil
}
