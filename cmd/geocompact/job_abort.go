package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
)

type jobAbortOptions struct {
	g   *globalOptions
	job jobRef
}

func newJobAbortCmd(g *globalOptions) *cobra.Command {
	o := &jobAbortOptions{g: g}
	cmd := &cobra.Command{
		Use:   "abort --job FILE_OR_ID",
		Short: "Delete a job's files and its record",
		Long: `Abort deletes every file the job wrote that no table metadata references, and
the job's record beside the table's metadata. A committed job's own files
are referenced and stay. Aborting twice is harmless.`,
		Example: `  $ geocompact job abort --job job.json`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runJobAbort(cmd.Context(), o)
		},
	}
	o.job.register(cmd)
	return cmd
}

func runJobAbort(ctx context.Context, o *jobAbortOptions) error {
	cat, _, err := o.g.openCatalog(ctx)
	if err != nil {
		return err
	}
	j, err := o.job.load(ctx, cat)
	if err != nil {
		return err
	}
	if err := abortJob(ctx, cat, j); err != nil {
		return fmt.Errorf("abort job %s: %w", j.ID, err)
	}
	return nil
}
