package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/geocompact/geocompact/cmd/internal/cli"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/job"
)

type jobPlanOptions struct {
	g       *globalOptions
	flags   cli.RewriteFlags
	shuffle string
}

func newJobPlanCmd(g *globalOptions) *cobra.Command {
	o := &jobPlanOptions{g: g}
	cmd := &cobra.Command{
		Use:   "plan --table NS.T",
		Short: "Plan a rewrite as units of work and print them",
		Long: `Plan plans a rewrite of the table at its current snapshot, with the flags of
geocompact rewrite, records the job beside the table's metadata (so that a
later commit sweeps it if this job's driver stops before it is done) and
prints the job on the first line and then its first units, one per line
(JSON). A group is one unit, rewritten whole by one worker, unless it is a
sorted group over the worker's memory budget (max-group-memory-bytes) and
--shuffle is auto: then it is spread over the workers in stages (see
geocompact job --help), and its first units scatter its input files. Nothing
to rewrite prints the job and no unit, and records nothing.`,
		Example: `  $ geocompact job plan --table gis.pings --curve hilbert > plan.jsonl
  $ geocompact job plan --table gis.pings --curve hilbert --shuffle never > plan.jsonl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			req, err := o.flags.Request()
			if err != nil {
				return &usageError{err}
			}
			if o.shuffle != "auto" && o.shuffle != "never" {
				return usageErrorf("--shuffle %q: want auto or never", o.shuffle)
			}
			req.Logger = g.Logger()
			return runJobPlan(cmd.Context(), o, req)
		},
	}
	o.flags.Register(cmd.Flags())
	cmd.Flags().StringVar(&o.shuffle, "shuffle", "auto", "auto: spread a sorted group over the memory budget across workers; never: one worker rewrites each group, spilling")
	cmd.MarkFlagRequired("table")
	return cmd
}

func runJobPlan(ctx context.Context, o *jobPlanOptions, req engine.Request) error {
	cat, _, err := o.g.openCatalog(ctx)
	if err != nil {
		return err
	}
	j, err := job.Prepare(ctx, cat, o.flags.Table, req)
	if err != nil {
		if cli.IsUsage(err) {
			return &usageError{err}
		}
		return err
	}
	j.SetShuffle(o.shuffle == "auto")
	if len(j.Groups) > 0 {
		if err := j.WriteMarker(ctx); err != nil {
			return err
		}
	}
	enc := json.NewEncoder(o.g.IO.Out)
	if err := enc.Encode(j); err != nil {
		return fmt.Errorf("write job: %w", err)
	}
	for _, u := range j.Units() {
		if err := enc.Encode(u); err != nil {
			return fmt.Errorf("write unit: %w", err)
		}
	}
	return nil
}
