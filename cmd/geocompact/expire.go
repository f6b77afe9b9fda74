package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/geocompact/geocompact/cmd/internal/cli"
	"github.com/geocompact/geocompact/maintain"
)

func init() { register(newExpireCmd) }

type expireOptions struct {
	g          *globalOptions
	table      string
	olderThan  string
	retainLast int
	dryRun     bool
	force      bool
	outside    bool
}

func newExpireCmd(g *globalOptions) *cobra.Command {
	o := &expireOptions{g: g}
	cmd := &cobra.Command{
		Use:   "expire --table NS.T",
		Short: "Expire old snapshots and delete the files only they reference",
		Long: `Expire does what Iceberg's expire_snapshots procedure does: snapshots older than
--older-than are removed from the table's history, except the --retain-last
newest of each branch and any snapshot a branch or tag points at, and the
files that only expired snapshots reached (data and delete files, manifests,
manifest lists, statistics) are deleted. A file that a retained snapshot or
any branch or tag still references is never deleted.

A freed file outside the table location (registered in place by Spark's
add_files or migrate, say) is kept and listed, unlike Spark's
expire_snapshots, which deletes it; --delete-outside-location deletes it
too. --force does not.

Expiry is the one step that cannot be undone: time travel to an expired
snapshot is gone. --older-than below 1h is refused without --force, as
readers mid-scan and time-travel consumers may still need those snapshots.
--dry-run lists the snapshots and files and changes nothing.`,
		Example: `  $ geocompact expire --table gis.telemetry --dry-run
  $ geocompact expire --table gis.telemetry --older-than 36h --retain-last 10
  $ geocompact expire --table gis.telemetry --older-than 2026-01-31T00:00:00Z`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := o.config(time.Now())
			if err != nil {
				return err
			}
			return runExpire(cmd.Context(), o, cfg)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.table, "table", "", "table to expire, NAMESPACE.TABLE (required)")
	f.StringVar(&o.olderThan, "older-than", "5d", "expire snapshots older than this: a duration (5d, 36h) or an RFC 3339 timestamp (UTC unless it has an offset)")
	f.IntVar(&o.retainLast, "retain-last", maintain.DefaultRetainLast, "keep this many newest snapshots of each branch whatever their age")
	f.BoolVar(&o.dryRun, "dry-run", false, "list what would be expired and freed; change nothing")
	f.BoolVar(&o.force, "force", false, "allow --older-than below the 1h retention floor")
	f.BoolVar(&o.outside, "delete-outside-location", false, "also delete freed files outside the table location (kept and listed otherwise)")
	_ = cmd.MarkFlagRequired("table")
	return cmd
}

// config parses and checks the flags; bad values are usage errors and
// nothing is opened.
func (o *expireOptions) config(now time.Time) (maintain.ExpireConfig, error) {
	age, err := maintain.ParseAge(o.olderThan, now)
	if err != nil {
		return maintain.ExpireConfig{}, usageErrorf("--older-than: %w", err)
	}
	cfg := maintain.ExpireConfig{OlderThan: age, RetainLast: o.retainLast, DryRun: o.dryRun, Force: o.force, DeleteOutsideLocation: o.outside, Logger: o.g.Logger()}
	if err := cfg.Validate(); err != nil {
		return cfg, &usageError{err}
	}
	return cfg, nil
}

func runExpire(ctx context.Context, o *expireOptions, cfg maintain.ExpireConfig) error {
	cat, spec, err := o.g.openCatalog(ctx)
	if err != nil {
		return err
	}
	cfg.CommitRetries = spec.Retries()
	res, err := maintain.Expire(ctx, cat, o.table, cfg)
	if err != nil {
		if cli.IsUsage(err) {
			return &usageError{err}
		}
		return err
	}
	if o.g.JSON {
		return cli.WriteJSON(o.g.IO.Out, res)
	}
	return writeExpireResult(o.g.IO.Out, res, o.g.IO.OutTTY)
}

func writeExpireResult(out io.Writer, res *maintain.ExpireResult, human bool) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	if len(res.ExpiredSnapshots) > 0 {
		fmt.Fprintln(w, "EXPIRED SNAPSHOT\tCOMMITTED\tOPERATION")
		for _, s := range res.ExpiredSnapshots {
			fmt.Fprintf(w, "%d\t%s\t%s\n", s.SnapshotID, s.Timestamp.Format(time.RFC3339), s.Operation)
		}
		fmt.Fprintln(w)
	}
	if err := writeFreedFiles(w, res.Files, human); err != nil {
		return err
	}
	fmt.Fprintln(w, "EXPIRED\tRETAINED\tDATA FILES\tDELETE FILES\tMANIFESTS\tMANIFEST LISTS\tSTATISTICS\tFREED")
	fmt.Fprintf(w, "%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\n", len(res.ExpiredSnapshots), res.RetainedSnapshots,
		res.DeletedDataFilesCount, res.DeletedPositionDeleteFilesCount+res.DeletedEqualityDeleteFilesCount,
		res.DeletedManifestFilesCount, res.DeletedManifestListsCount, res.DeletedStatisticsFilesCount, cli.FormatBytes(res.FreedBytes, human))
	if err := w.Flush(); err != nil {
		return err
	}
	if len(res.RemovedRefs) > 0 {
		fmt.Fprintf(out, "removed refs past their max-ref-age-ms: %v\n", res.RemovedRefs)
	}
	for _, h := range res.HeldByRefs {
		fmt.Fprintf(out, "retained snapshot %d (%s): %s\n", h.SnapshotID, h.Timestamp.Format(time.RFC3339), h.Reason)
	}
	if len(res.Kept) > 0 {
		fmt.Fprintln(out)
	}
	if err := writeKeptFiles(out, res.Kept, human, "pass --delete-outside-location to delete the files outside the table location"); err != nil {
		return err
	}
	cut := fmt.Sprintf("older than %s (before %s), keeping the last %d", maintain.FormatDuration(res.OlderThan), res.Cutoff.Format(time.RFC3339), res.RetainLast)
	var err error
	switch {
	case res.DryRun:
		_, err = fmt.Fprintf(out, "dry run: %d snapshots %s would expire, freeing %d files (%s); nothing was changed\n",
			len(res.ExpiredSnapshots), cut, len(res.Files), cli.FormatBytes(res.FreedBytes, true))
	case len(res.ExpiredSnapshots) == 0:
		_, err = fmt.Fprintf(out, "nothing to expire: no snapshot is %s\n", cut)
	default:
		_, err = fmt.Fprintf(out, "expired %d snapshots %s; freed %d files (%s)\n",
			len(res.ExpiredSnapshots), cut, len(res.Files), cli.FormatBytes(res.FreedBytes, true))
	}
	return err
}

// writeFreedFiles lists freed files: kind, bytes and path.
func writeFreedFiles(w io.Writer, files []maintain.FreedFile, human bool) error {
	if len(files) == 0 {
		return nil
	}
	fmt.Fprintln(w, "KIND\tBYTES\tPATH")
	for _, f := range files {
		fmt.Fprintf(w, "%s\t%s\t%s\n", f.Kind, cli.FormatBytes(f.Bytes, human), displayName(f.Path))
	}
	_, err := fmt.Fprintln(w)
	return err
}

// writeKeptFiles lists the files a removal kept, with the reason, and a
// hint when some are outside the table location.
func writeKeptFiles(out io.Writer, kept []maintain.KeptFile, human bool, outsideHint string) error {
	if len(kept) == 0 {
		return nil
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "KEPT\tKIND\tBYTES\tPATH")
	outside := 0
	for _, f := range kept {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", f.Reason, f.Kind, cli.FormatBytes(f.Bytes, human), displayName(f.Path))
		if f.Reason == maintain.KeepOutsideLocation {
			outside++
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	msg := fmt.Sprintf("kept %d files: not deleted", len(kept))
	if outside > 0 && outsideHint != "" {
		msg += fmt.Sprintf("; %d outside the table location (%s)", outside, outsideHint)
	}
	_, err := fmt.Fprintln(out, msg)
	return err
}
