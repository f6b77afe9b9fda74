package main

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/geocompact/geocompact/cmd/internal/cli"
	"github.com/geocompact/geocompact/maintain"
)

func init() { register(newRewriteManifestsCmd) }

type rewriteManifestsOptions struct {
	g          *globalOptions
	table      string
	targetSize int64
}

func newRewriteManifestsCmd(g *globalOptions) *cobra.Command {
	o := &rewriteManifestsOptions{g: g}
	cmd := &cobra.Command{
		Use:   "rewrite-manifests --table NS.T",
		Short: "Merge a table's small manifests",
		Long: `Rewrite-manifests does what Iceberg's rewrite_manifests procedure does: it merges
the small manifests that streaming appends leave (one per commit) into
target-sized ones, so planning reads a few manifests instead of hundreds. It
commits a metadata-only replace snapshot; data files are not touched.`,
		Example: `  $ geocompact rewrite-manifests --table gis.telemetry`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.targetSize < 0 {
				return usageErrorf("--target-size-bytes %d: want a positive size", o.targetSize)
			}
			return runRewriteManifests(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.table, "table", "", "table whose manifests to merge, NAMESPACE.TABLE (required)")
	f.Var(sizeFlag{&o.targetSize}, "target-size-bytes", "size of the merged manifests, e.g. 8MiB (default: the table's commit.manifest.target-size-bytes, 8 MiB)")
	_ = cmd.MarkFlagRequired("table")
	return cmd
}

func runRewriteManifests(ctx context.Context, o *rewriteManifestsOptions) error {
	cat, spec, err := o.g.openCatalog(ctx)
	if err != nil {
		return err
	}
	res, err := maintain.RewriteManifests(ctx, cat, o.table, maintain.ManifestsConfig{TargetSizeBytes: o.targetSize, CommitRetries: spec.Retries(), Logger: o.g.Logger()})
	if err != nil {
		return err
	}
	if o.g.JSON {
		return cli.WriteJSON(o.g.IO.Out, res)
	}
	w := tabwriter.NewWriter(o.g.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "MANIFESTS BEFORE\tMANIFESTS AFTER\tREWRITTEN\tADDED\tSNAPSHOT")
	snap := "-"
	if res.SnapshotID != 0 {
		snap = fmt.Sprint(res.SnapshotID)
	}
	fmt.Fprintf(w, "%d\t%d\t%d\t%d\t%s\n", res.ManifestsBefore, res.ManifestsAfter, res.RewrittenManifestsCount, res.AddedManifestsCount, snap)
	if err := w.Flush(); err != nil {
		return err
	}
	if res.NoopReason != "" {
		_, err = fmt.Fprintf(o.g.IO.Out, "nothing rewritten: %s\n", res.NoopReason)
	}
	return err
}
