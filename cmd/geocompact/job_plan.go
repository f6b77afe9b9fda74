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
	workers int
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
sorted group over the worker's memory budget (max-group-memory-bytes) that
--shuffle spreads over the workers in stages (see geocompact job --help):
then its first units scatter its input files. With --shuffle auto (the
default) a group is spread when it holds more than its share of the job's
rows for --workers workers, so that it would keep one worker busy long
after the others; always spreads every such group, never none. Nothing
to rewrite prints the job and no unit, and records nothing.`,
		Example: `  $ geocompact job plan --table gis.pings --curve hilbert > plan.jsonl
  $ geocompact job plan --table gis.pings --curve hilbert --workers 16 > plan.jsonl
  $ geocompact job plan --table gis.pings --curve hilbert --shuffle never > plan.jsonl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			req, err := o.flags.Request()
			if err != nil {
				return &usageError{err}
			}
			if o.shuffle != job.ShuffleAuto && o.shuffle != job.ShuffleAlways && o.shuffle != job.ShuffleNever {
				return usageErrorf("--shuffle %q: want auto, always or never", o.shuffle)
			}
			if o.workers < 1 {
				return usageErrorf("--workers %d: want at least 1", o.workers)
			}
			req.Logger = g.Logger()
			return runJobPlan(cmd.Context(), o, req)
		},
	}
	o.flags.Register(cmd.Flags())
	cmd.Flags().StringVar(&o.shuffle, "shuffle", job.ShuffleAuto, "which sorted groups over the memory budget are spread across the workers: auto (one that holds more than its share of the rows for --workers), always, never (one worker rewrites each group, spilling)")
	cmd.Flags().IntVar(&o.workers, "workers", 1, "units the engine runs at once, for --shuffle auto")
	_ = cmd.MarkFlagRequired("table")
	return cmd
}

func runJobPlan(ctx context.Context, o *jobPlanOptions, req engine.Request) error {
	cat, _, err := o.g.openCatalog(ctx)
	if err != nil {
		return err
	}
	j, err := job.PrepareShuffle(ctx, cat, o.flags.Table, req, job.Shuffle{Mode: o.shuffle, Workers: o.workers})
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
	for _, u := range j.Units() {
		if err := enc.Encode(u); err != nil {
			return fmt.Errorf("write unit: %w", err)
		}
	}
	return nil
}
