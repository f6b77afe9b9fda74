package main

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/geocompact/geocompact/cmd/internal/cli"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/layouts"
)

func init() { register(newRewriteCmd) }

type rewriteOptions struct {
	g     *globalOptions
	flags cli.RewriteFlags
	// delta is the location of a Delta table to rewrite instead.
	delta string
	// purge is --purge-deletion-vectors: REORG TABLE … APPLY (PURGE).
	purge bool
}

func newRewriteCmd(g *globalOptions) *cobra.Command {
	o := &rewriteOptions{g: g}
	cmd := &cobra.Command{
		Use:   "rewrite (--table NS.T | --delta LOCATION)",
		Short: "Compact a table's data files, optionally clustered by a spatial curve",
		Long: `Rewrite does what Iceberg's rewrite_data_files procedure does: it rewrites small
(and oversized) data files into files of the target size and commits them as
one replace snapshot. With --curve or --sort-order (strategy sort) the rows of
each file group are ordered by that key across the whole group, so bbox
queries open few files. Row count, bbox extent and a content checksum are
verified before anything is committed.

Without --strategy, --curve and --sort-order the table's recorded layout
applies (see geocompact alter: the ` + layouts.Prop + ` property, else the
Iceberg sort order, else binpack), with the table's
write.target-file-size-bytes. A layout that differs from the recorded one
is refused unless --allow-layout-change is given.

--curve auto picks, for each file group, the layout that a sample of the
group's row boxes predicts plans the fewest files for query windows (by
default data-placed windows of 0.1% and 1% of the extent; --windows FILE
for your own); --dry-run prints every candidate's estimate, and the
snapshot summary records the choice (` + engine.SummaryAuto + `).

--delta LOCATION rewrites a Delta table (a directory, file: URL or
s3://BUCKET/PREFIX) the same way, as an OPTIMIZE commit (remove and add
actions that change no data); its layout is recorded in the same table
property. --where scopes it as it scopes an Iceberg rewrite: a file is
rewritten (whole) when its partition values and Delta statistics (min, max,
null count) may hold a matching row, and a file without statistics for a
column the predicate names always may.

--purge-deletion-vectors (with --delta) rewrites exactly the files that
carry a deletion vector, whatever their size, and no other file, as Delta's
REORG TABLE … APPLY (PURGE) does: the rows the vectors delete are gone from
the new files, which carry none. The table's layout applies within each
group.

Options take Iceberg's names (--option K=V, repeatable): ` + strings.Join(engine.KnownOptions(), ", ") + `.`,
		Example: `  $ geocompact rewrite --table gis.telemetry --curve hilbert --dry-run
  $ geocompact rewrite --table gis.telemetry --curve hilbert --option target-file-size-bytes=134217728
  $ geocompact rewrite --table gis.telemetry --where "ts >= '2026-01-02' AND ts < '2026-01-03'"
  $ geocompact rewrite --table gis.parcels --sort-order 'zorder(bbox_minx, bbox_miny)' --json
  $ geocompact rewrite --table gis.telemetry --curve auto --dry-run
  $ geocompact rewrite --table gis.telemetry --strategy binpack --allow-layout-change
  $ geocompact rewrite --delta ./lake/pings --curve hilbert
  $ geocompact rewrite --delta ./lake/pings --where "ts >= '2026-11-01' AND bbox(5, 45, 10, 50)" --dry-run
  $ geocompact rewrite --delta ./lake/pings --purge-deletion-vectors`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := o.config()
			if err != nil {
				return err
			}
			return runRewrite(cmd.Context(), o, cfg)
		},
	}
	o.flags.Register(cmd.Flags())
	cmd.Flags().StringVar(&o.delta, "delta", "", "rewrite the Delta table at this location (a directory, file: URL or s3://BUCKET/PREFIX) instead of a catalog table")
	cmd.Flags().BoolVar(&o.purge, "purge-deletion-vectors", false, "with --delta: rewrite exactly the files that carry a deletion vector, whatever their size (REORG TABLE … APPLY (PURGE))")
	cmd.MarkFlagsOneRequired("table", "delta")
	cmd.MarkFlagsMutuallyExclusive("table", "delta")
	return cmd
}

// ref is the table the flags name.
func (o *rewriteOptions) ref() table.Ref { return table.Ref{Name: o.flags.Table, Location: o.delta} }

// config checks the flags and builds the engine's config. Option names and
// values are checked here, before the catalog is opened.
func (o *rewriteOptions) config() (engine.Request, error) {
	flags := o.flags
	flags.Table = o.ref().String() // a Delta table is named by its location
	cfg, err := flags.Request()
	if err != nil {
		return engine.Request{}, &usageError{err}
	}
	if o.purge && !o.ref().IsDelta() {
		return engine.Request{}, usageErrorf("--purge-deletion-vectors applies to a Delta table (--delta LOCATION): " +
			"an Iceberg table's deletes are dropped by a rewrite of the files they apply to (--option delete-file-threshold=N)")
	}
	cfg.PurgeDeletes = o.purge
	cfg.Logger = o.g.Logger()
	return cfg, nil
}

// parseKV parses repeated K=V flags (see cli.ParseKV); a mistake is a
// usage error.
func parseKV(pairs []string) (map[string]string, error) {
	kv, err := cli.ParseKV(pairs)
	if err != nil {
		return nil, &usageError{err}
	}
	return kv, nil
}

func runRewrite(ctx context.Context, o *rewriteOptions, cfg engine.Request) error {
	ref := o.ref()
	p := newProgress(o.g, "rewrite", "")
	cfg.Progress = rewriteProgress(p)
	var res *engine.Result
	t, err := o.g.openTable(ctx, ref, toRewrite.unlessDryRun(cfg.DryRun))
	var prep *engine.Prepared
	if err == nil {
		defer t.Close()
		cfg.CommitRetries = t.Retries
		prep, err = engine.Prepare(ctx, t.Table, cfg)
	}
	if err == nil {
		// The soft limit leaves room for the files being written, whose
		// size may come from the table's properties.
		cli.LimitMemoryTo(prep.Options(), prep.BinPacks())
		res, err = prep.Run(ctx)
	}
	p.Done()
	if err != nil && res == nil {
		if cli.IsUsage(err) {
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
		return cli.WriteJSON(g.IO.Out, res)
	}
	return cli.WriteResult(g.IO.Out, res, g.IO.OutTTY)
}
