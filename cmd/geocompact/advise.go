package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/geocompact/geocompact/cmd/internal/cli"
	"github.com/geocompact/geocompact/maintain"
	"github.com/geocompact/geocompact/table/catalogs"
)

func init() { register(newAdviseCmd) }

type adviseOptions struct {
	g            *globalOptions
	table        string
	sparkCatalog string
}

func newAdviseCmd(g *globalOptions) *cobra.Command {
	o := &adviseOptions{g: g}
	cmd := &cobra.Command{
		Use:   "advise --table NS.T",
		Short: "Suggest target file size, cadence and retention from a table's history",
		Long: `Advise reads the table's snapshot history (commit rate, bytes per commit) and
its current file sizes per partition, and suggests a target file size,
min-file-size, gate thresholds, a compaction cadence and a snapshot
retention, each with its reason. It prints the maintain policy (YAML) those
add up to, and the equivalent Spark procedure calls for teams that also run
Spark. It changes nothing.`,
		Example: `  $ geocompact advise --table gis.telemetry
  $ geocompact advise --table gis.telemetry --spark-catalog lake > advice.txt`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runAdvise(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.table, "table", "", "table to advise on, NAMESPACE.TABLE (required)")
	f.StringVar(&o.sparkCatalog, "spark-catalog", "catalog", "catalog name to use in the Spark CALL statements")
	_ = cmd.MarkFlagRequired("table")
	return cmd
}

// adviceJSON is advise's --json document.
type adviceJSON struct {
	*maintain.Advice
	PolicyYAML string   `json:"policy_yaml"`
	Spark      []string `json:"spark"`
}

func runAdvise(ctx context.Context, o *adviseOptions) error {
	cat, _, err := o.g.openCatalog(ctx)
	if err != nil {
		return err
	}
	tbl, err := catalogs.LoadTable(ctx, cat, o.table)
	if err != nil {
		return err
	}
	a, err := maintain.Advise(ctx, tbl)
	if err != nil {
		return err
	}
	y, err := a.Policy.YAML()
	if err != nil {
		return err
	}
	spark := a.SparkCalls(o.sparkCatalog, time.Now())
	if o.g.JSON {
		return cli.WriteJSON(o.g.IO.Out, adviceJSON{Advice: a, PolicyYAML: string(y), Spark: spark})
	}
	out, human := o.g.IO.Out, o.g.IO.OutTTY
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "OBSERVED\tVALUE")
	fmt.Fprintf(w, "ingest commits\t%d over %s\n", a.IngestCommits, maintain.FormatDuration(a.HistorySpan.Round(time.Second)))
	if a.RateUnknown != "" {
		fmt.Fprintf(w, "commits per hour\tunknown: %s\n", a.RateUnknown)
	} else {
		fmt.Fprintf(w, "commits per hour\t%.1f\n", a.CommitsPerHour)
		fmt.Fprintf(w, "ingest per hour\t%s\n", cli.FormatBytes(int64(a.IngestBytesPerHour), human))
	}
	fmt.Fprintf(w, "bytes per commit\t%s\n", cli.FormatBytes(a.BytesPerCommit, human))
	fmt.Fprintf(w, "data files\t%d, average %s\n", a.FileCount, cli.FormatBytes(a.AvgFileBytes, human))
	fmt.Fprintf(w, "partitions\t%d, largest %s\n", a.Partitions, cli.FormatBytes(a.LargestPartition, human))
	fmt.Fprintln(w)
	fmt.Fprintln(w, "SUGGESTED\tVALUE")
	fmt.Fprintf(w, "target-file-size-bytes\t%s\n", cli.FormatBytes(a.TargetFileSizeBytes, human))
	fmt.Fprintf(w, "min-file-size-bytes\t%s\n", cli.FormatBytes(a.MinFileSizeBytes, human))
	fmt.Fprintf(w, "cadence\t%s\n", maintain.FormatDuration(a.Cadence))
	fmt.Fprintf(w, "gate min-avg-file-bytes\t%s\n", cli.FormatBytes(a.MinAvgFileBytes, human))
	fmt.Fprintf(w, "gate max-files-per-partition\t%d\n", a.MaxFilesPerPartition)
	fmt.Fprintf(w, "expire older-than\t%s\n", maintain.FormatDuration(a.ExpireOlderThan))
	fmt.Fprintf(w, "expire retain-last\t%d\n", a.RetainLast)
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(out)
	for _, r := range a.Reasons {
		fmt.Fprintf(out, "- %s\n", r)
	}
	fmt.Fprintf(out, "\n# maintain policy: save as maintain.yaml, run `geocompact maintain --table %s --policy maintain.yaml` every %s\n%s",
		a.Table, maintain.FormatDuration(a.Cadence), y)
	fmt.Fprintln(out, "\n-- Spark equivalents (compute older_than at run time in a scheduled job):")
	if a.SparkSortOrder == "" {
		fmt.Fprintln(out, "-- the table has no bbox columns, and Spark cannot order by a geometry column: binpack only")
	} else {
		fmt.Fprintln(out, "-- Spark has no Hilbert curve; zorder over the bbox minimum corner is the nearest equivalent")
	}
	_, err = fmt.Fprintln(out, strings.Join(spark, ";\n")+";")
	return err
}
