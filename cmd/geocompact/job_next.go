package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/apache/iceberg-go/catalog"
	"github.com/spf13/cobra"
)

type jobNextOptions struct {
	g   *globalOptions
	job jobRef
}

func newJobNextCmd(g *globalOptions) *cobra.Command {
	o := &jobNextOptions{g: g}
	cmd := &cobra.Command{
		Use:   "next --job FILE_OR_ID [RESULTS...]",
		Short: "Print the units still to run, from the results so far",
		Long: `Next reads the result lines of job work so far, every stage's (from the files
given, else from stdin), and prints the units still to run, one JSON line
each: the next stage of every group spread over the workers whose stage is
done (bucket units after its scatter units, span units after its bucket
units), and any unit whose result is missing. It prints nothing when every
unit has run: then commit. It reads nothing but the job and the results,
and writes nothing.`,
		Example: `  $ geocompact job next --job job.json results.jsonl > more.jsonl
  $ test -s more.jsonl || geocompact job commit --job job.json results.jsonl`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runJobNext(cmd.Context(), o, args)
		},
	}
	o.job.register(cmd)
	return cmd
}

func runJobNext(ctx context.Context, o *jobNextOptions, paths []string) error {
	// Only a job named by its id needs the catalog, to find its record.
	var cat catalog.Catalog
	if o.job.isID() {
		var err error
		if cat, _, err = o.g.openCatalog(ctx); err != nil {
			return err
		}
	}
	j, err := o.job.load(ctx, cat)
	if err != nil {
		return err
	}
	rs, err := readUnitResults(j, o.g.IO.In, paths)
	if err != nil {
		return err
	}
	us, err := j.Next(rs)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(o.g.IO.Out)
	for _, u := range us {
		if err := enc.Encode(u); err != nil {
			return fmt.Errorf("write unit: %w", err)
		}
	}
	return nil
}
