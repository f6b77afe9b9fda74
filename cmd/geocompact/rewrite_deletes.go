package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/geocompact/geocompact/cmd/internal/cli"
	"github.com/geocompact/geocompact/maintain/posdeletes"
)

func init() { register(newRewriteDeletesCmd) }

type rewriteDeletesOptions struct {
	g       *globalOptions
	table   string
	where   string
	options []string
	dryRun  bool
}

func newRewriteDeletesCmd(g *globalOptions) *cobra.Command {
	o := &rewriteDeletesOptions{g: g}
	cmd := &cobra.Command{
		Use:   "rewrite-deletes --table NS.T",
		Short: "Merge a table's small position delete files",
		Long: `Rewrite-deletes does what Iceberg's rewrite_position_delete_files procedure
does: the position delete files that merge-on-read DELETEs and MERGEs leave
are merged, per partition, toward write.delete.target-file-size-bytes
(64 MiB), so readers open a few delete files instead of hundreds. Positions
that point at data files no longer live are dropped, and a delete file left
with none is removed. On a v3 table the position delete files become
deletion vectors, one per data file. Data files are not touched and no row
a reader sees changes; the commit is a replace snapshot.

A partition is rewritten when it has min-input-files (5) small files, or
more than a target's worth; --option rewrite-all=true rewrites every
position delete file. --where keeps the delete files that apply to data
files the predicate may match. --dry-run counts what would be rewritten.

Options take Iceberg's names (--option K=V, repeatable): ` + strings.Join(posdeletes.KnownOptions(), ", ") + `.`,
		Example: `  $ geocompact rewrite-deletes --table gis.telemetry --dry-run
  $ geocompact rewrite-deletes --table gis.telemetry --option rewrite-all=true
  $ geocompact rewrite-deletes --table gis.telemetry --where "ts >= '2026-11-01'"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			kv, err := parseKV(o.options)
			if err != nil {
				return err
			}
			if _, err := posdeletes.ParseOptions(kv, nil); err != nil {
				return &usageError{err}
			}
			return runRewriteDeletes(cmd.Context(), o, kv)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.table, "table", "", "table whose position delete files to merge, NAMESPACE.TABLE (required)")
	f.StringVar(&o.where, "where", "", "only the delete files of data files that may hold matching rows, e.g. \"ts >= '2026-11-01'\" (UTC)")
	f.StringArrayVar(&o.options, "option", nil, "option K=V by Iceberg's name (repeatable)")
	f.BoolVar(&o.dryRun, "dry-run", false, "count the delete files that would be rewritten; write nothing")
	_ = cmd.MarkFlagRequired("table")
	return cmd
}

func runRewriteDeletes(ctx context.Context, o *rewriteDeletesOptions, kv map[string]string) error {
	cat, spec, err := o.g.openCatalog(ctx)
	if err != nil {
		return err
	}
	res, err := posdeletes.Rewrite(ctx, cat, o.table, posdeletes.Config{Where: o.where, Options: kv, DryRun: o.dryRun,
		CommitRetries: spec.Retries(), Logger: o.g.Logger()})
	if err != nil {
		return err
	}
	if o.g.JSON {
		return cli.WriteJSON(o.g.IO.Out, res)
	}
	return writeRewriteDeletes(o.g, res)
}

func writeRewriteDeletes(g *globalOptions, res *posdeletes.Result) error {
	w := tabwriter.NewWriter(g.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "REWRITTEN DELETE FILES\tADDED DELETE FILES\tREWRITTEN BYTES\tADDED BYTES\tPOSITIONS KEPT\tDROPPED\tSNAPSHOT")
	snap := "-"
	if id := res.SnapshotID; id != 0 {
		snap = fmt.Sprint(id)
	}
	fmt.Fprintf(w, "%d\t%d\t%d\t%d\t%d\t%d\t%s\n", res.RewrittenDeleteFilesCount, res.AddedDeleteFilesCount,
		res.RewrittenBytesCount, res.AddedBytesCount, res.DeletesKept, res.DanglingDropped, snap)
	if err := w.Flush(); err != nil {
		return err
	}
	var err error
	switch {
	case res.NoopReason != "":
		_, err = fmt.Fprintf(g.IO.Out, "nothing rewritten: %s\n", res.NoopReason)
	case res.DryRun:
		_, err = fmt.Fprintf(g.IO.Out, "dry run: %d groups would be rewritten; nothing was written\n", res.Groups)
	case res.DeletionVectors:
		_, err = fmt.Fprintln(g.IO.Out, "the position deletes are now deletion vectors (a v3 table)")
	}
	return err
}
