package main

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/cmd/internal/cli"
	"github.com/geocompact/geocompact/spatial"
)

func init() { register(newGenerateCmd) }

type generateOptions struct {
	g            *globalOptions
	cfg          bench.GenerateConfig
	geometry     string
	distribution string
	extent       string
}

func newGenerateCmd(g *globalOptions) *cobra.Command {
	o := &generateOptions{g: g}
	cmd := &cobra.Command{
		Use:   "generate --table NS.T --rows N --commits K",
		Short: "Build a fragmented spatial table to test on",
		Long: `Generate appends K small commits of random geometries in arrival order, the
way streaming ingest leaves a table: every data file spans the whole extent,
so bbox filters prune nothing until the table is compacted.`,
		Example: `  $ geocompact generate --table demo.pings --rows 200000 --commits 100
  $ geocompact generate --table demo.parcels --geometry polygons --distribution clustered --partition-by 'day(ts)'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.complete(); err != nil {
				return err
			}
			return runGenerate(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.cfg.Table, "table", "", "table to create, NAMESPACE.TABLE (required)")
	f.Int64Var(&o.cfg.Rows, "rows", 100000, "number of rows")
	f.IntVar(&o.cfg.Commits, "commits", 50, "number of append commits the rows arrive in")
	f.StringVar(&o.geometry, "geometry", "points", "geometry kind: points, lines or polygons")
	f.StringVar(&o.distribution, "distribution", "uniform", "where geometries fall: uniform, clustered (generated hotspots), places (GPS-like pings around real populated places, by population) or tracks (pings of a fleet driving between real places)")
	f.StringVar(&o.extent, "extent", "-180,-90,180,90", "extent minx,miny,maxx,maxy")
	f.IntVar(&o.cfg.FormatVersion, "format-version", 2, "Iceberg format version: 2 (WKB binary + bbox columns) or 3 (geometry type)")
	f.BoolVar(&o.cfg.BBoxColumns, "bbox-columns", false, "add bbox columns to a v3 table (v2 tables always have them)")
	f.StringVar(&o.cfg.PartitionBy, "partition-by", "", "partition spec, e.g. 'day(ts)'")
	f.StringVar(&o.cfg.CRS, "crs", spatial.DefaultCRS, "CRS recorded for the geometry column")
	f.Uint64Var(&o.cfg.Seed, "seed", 1, "random seed; the same seed gives the same table")
	f.BoolVar(&o.cfg.Replace, "replace", false, "drop an existing table of the same name first")
	_ = cmd.MarkFlagRequired("table")
	return cmd
}

// complete parses the flags that need it and checks the config, so that
// bad input is refused before anything is written.
func (o *generateOptions) complete() error {
	var err error
	if o.cfg.Geometry, err = bench.ParseGeometryKind(o.geometry); err != nil {
		return usageErrorf("--geometry: %w", err)
	}
	if o.cfg.Distribution, err = bench.ParseDistribution(o.distribution); err != nil {
		return usageErrorf("--distribution: %w", err)
	}
	if o.cfg.Extent, err = bench.ParseExtent(o.extent); err != nil {
		return usageErrorf("--extent: %w", err)
	}
	if err := o.cfg.Validate(); err != nil {
		return &usageError{err}
	}
	return nil
}

func runGenerate(ctx context.Context, o *generateOptions) error {
	cat, _, err := o.g.openCatalog(ctx)
	if err != nil {
		return err
	}
	p := newProgress(o.g, "generate", "commits")
	o.cfg.Progress = p.Update
	res, err := bench.Generate(ctx, cat, o.cfg)
	p.Done()
	if err != nil {
		return err
	}
	if o.g.JSON {
		return json.NewEncoder(o.g.IO.Out).Encode(res)
	}
	w := tabwriter.NewWriter(o.g.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "TABLE\tROWS\tCOMMITS\tDATA FILES\tBYTES\tEXTENT")
	fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%s\t%s\n", res.Table, res.Rows, res.Commits, res.DataFiles,
		cli.FormatBytes(res.Bytes, o.g.IO.OutTTY), formatBound(res.Extent))
	return w.Flush()
}
