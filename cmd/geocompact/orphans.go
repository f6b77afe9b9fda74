package main

import (
	"context"
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/geocompact/geocompact/cmd/internal/cli"
	"github.com/geocompact/geocompact/maintain"
)

func init() { register(newOrphansCmd) }

type orphansOptions struct {
	g         *globalOptions
	table     string
	olderThan string
	dryRun    bool
	force     bool
}

func newOrphansCmd(g *globalOptions) *cobra.Command {
	o := &orphansOptions{g: g}
	cmd := &cobra.Command{
		Use:   "orphans --table NS.T",
		Short: "Remove files under the table location that no metadata references",
		Long: `Orphans does what Iceberg's remove_orphan_files procedure does: it lists the files
under the table location, and deletes those that no snapshot, manifest,
metadata file or statistics file of the table references, such as the
outputs of a crashed writer.

Files younger than --older-than (default 3d) are kept, as they may belong to
a writer that has not committed yet; below 1h that needs --force. Nothing
outside the table location is ever listed or deleted. Symbolic links are
never followed: a link to a directory (or to nothing) is listed as kept,
never removed; an unreferenced link to a file is removed, never its target.
--dry-run lists the files and deletes nothing.`,
		Example: `  $ geocompact orphans --table gis.telemetry --dry-run
  $ geocompact orphans --table gis.telemetry --older-than 7d`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			age, err := maintain.ParseDuration(o.olderThan)
			if err != nil {
				return usageErrorf("--older-than: %w", err)
			}
			cfg := maintain.OrphansConfig{OlderThan: age, DryRun: o.dryRun, Force: o.force, Logger: g.Logger()}
			if err := cfg.Validate(); err != nil {
				return &usageError{err}
			}
			return runOrphans(cmd.Context(), o, cfg)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.table, "table", "", "table to clean, NAMESPACE.TABLE (required)")
	f.StringVar(&o.olderThan, "older-than", "3d", "keep unreferenced files younger than this (5d, 36h)")
	f.BoolVar(&o.dryRun, "dry-run", false, "list the orphan files; delete nothing")
	f.BoolVar(&o.force, "force", false, "allow --older-than below the 1h retention floor")
	_ = cmd.MarkFlagRequired("table")
	return cmd
}

func runOrphans(ctx context.Context, o *orphansOptions, cfg maintain.OrphansConfig) error {
	cat, _, err := o.g.openCatalog(ctx)
	if err != nil {
		return err
	}
	res, err := maintain.RemoveOrphans(ctx, cat, o.table, cfg)
	if err != nil && res == nil {
		if errors.Is(err, maintain.ErrRetentionFloor) {
			return &usageError{err}
		}
		return err
	}
	var werr error
	if o.g.JSON {
		werr = cli.WriteJSON(o.g.IO.Out, res)
	} else {
		werr = writeOrphansResult(o.g, res)
	}
	if err == nil {
		err = werr
	}
	return err
}

func writeOrphansResult(g *globalOptions, res *maintain.OrphansResult) error {
	out, human := g.IO.Out, g.IO.OutTTY
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	if err := writeFreedFiles(w, res.Files, human); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := writeKeptFiles(out, res.Kept, human, ""); err != nil {
		return err
	}
	cut := fmt.Sprintf("older than %s (before %s) under %s", maintain.FormatDuration(res.OlderThan), res.Cutoff.Format(time.RFC3339), res.Location)
	var err error
	switch {
	case len(res.Files) == 0:
		_, err = fmt.Fprintf(out, "no orphan files %s\n", cut)
	case res.DryRun:
		_, err = fmt.Fprintf(out, "dry run: %d orphan files (%s) %s would be removed; nothing was deleted\n", len(res.Files), cli.FormatBytes(res.Bytes, true), cut)
	default:
		_, err = fmt.Fprintf(out, "removed %d orphan files (%s) %s\n", len(res.Files), cli.FormatBytes(res.Bytes, true), cut)
	}
	return err
}
