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
	g     *globalOptions
	flags cli.RewriteFlags
}

func newJobPlanCmd(g *globalOptions) *cobra.Command {
	o := &jobPlanOptions{g: g}
	cmd := &cobra.Command{
		Use:   "plan --table NS.T",
		Short: "Plan a rewrite as units of work and print them",
		Long: `Plan plans a rewrite of the table at its current snapshot, with the flags of
geocompact rewrite, records the job beside the table's metadata (so that a
later commit sweeps it if this job's driver stops before it is done) and
prints the job on the first line and then one unit per line (JSON): one unit
per file group, rewritten whole by one worker. Nothing to rewrite prints the
job and no unit, and records nothing.`,
		Example: `  $ geocompact job plan --table gis.pings --curve hilbert > plan.jsonl`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			req, err := o.flags.Request()
			if err != nil {
				return &usageError{err}
			}
			req.Logger = g.Logger()
			return runJobPlan(cmd.Context(), o, req)
		},
	}
	o.flags.Register(cmd.Flags())
	_ = cmd.MarkFlagRequired("table")
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
	if len(j.Groups) > 0 {
		if err := j.WriteMarker(ctx); err != nil {
			return err
		}
	}
	enc := json.NewEncoder(o.g.IO.Out)
	if err := enc.Encode(j); err != nil {
		return fmt.Errorf("write job: %w", err)
	}
	for i := range j.Groups {
		if err := enc.Encode(jobUnit{Job: j.ID, Group: i}); err != nil {
			return fmt.Errorf("write unit: %w", err)
		}
	}
	return nil
}
