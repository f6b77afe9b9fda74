package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/geocompact/geocompact/cmd/internal/cli"
	"github.com/geocompact/geocompact/maintain"
)

func init() { register(newMaintainCmd) }

type maintainOptions struct {
	g *globalOptions
	// tbl is the table to maintain: --table, or --delta for a Delta
	// table.
	tbl    tableFlags
	policy string
	dryRun bool
}

func newMaintainCmd(g *globalOptions) *cobra.Command {
	o := &maintainOptions{g: g}
	cmd := &cobra.Command{
		Use:   "maintain (--table NS.T | --delta LOCATION) [--policy FILE] [--dry-run]",
		Short: "Run one maintenance pass over a table, for schedulers",
		Long: `Maintain is the command a scheduler runs: measure the table, compact it if the
policy's gate says fragmentation justifies it (rewrite, then verify), merge
manifests when there are too many, expire snapshots and remove orphan files
on their own cadences, and measure again. It prints each step and the
metrics before and after.

Runs on the same table exclude each other with a lease kept in the table's
metadata (a tag plus owner and expiry properties), so a second run exits 4
naming the holder, and a crashed run's lease lapses after lease.ttl.

Exit codes: 0 done or nothing to do, 1 error, 2 bad policy or flags,
4 another run holds the table or a commit lost a race (retry later).

The rewrite follows the table's recorded layout (geocompact alter) unless
the policy names one, and the gate's size floor is a quarter of the table's
target file size unless the policy sets min-avg-file-bytes. --dry-run prints
what each step would do and changes nothing (no lease either).

Without --policy the defaults of docs/policy.md apply.

--delta LOCATION maintains a Delta table (a directory, file: URL or
s3://BUCKET/PREFIX): measure it from its log, optimize when the gate fires
(the recorded layout and delta.targetFileSize by default), verify, and
vacuum on the policy's vacuum cadence with the table's
delta.deletedFileRetentionDuration (a policy may only keep files longer).
It takes no lease; manifests, expire and orphans are reported as not
applicable.`,
		Example: `  $ geocompact maintain --table gis.telemetry --policy maintain.yaml
  $ geocompact maintain --table gis.telemetry --dry-run
  $ geocompact maintain --table gis.telemetry --json
  $ geocompact maintain --delta ./lake/pings --dry-run`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := maintain.LoadPolicy(o.policy)
			if err != nil {
				return &usageError{err}
			}
			return runMaintain(cmd.Context(), o, p)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.tbl.name, "table", "", "table to maintain, NAMESPACE.TABLE")
	f.StringVar(&o.tbl.location, "delta", "", "maintain the Delta table at this location (a directory, file: URL or s3://BUCKET/PREFIX) instead of a catalog table")
	f.StringVar(&o.policy, "policy", "", "policy file (YAML; see docs/policy.md)")
	f.BoolVar(&o.dryRun, "dry-run", false, "print what each step would do and change nothing")
	cmd.MarkFlagsOneRequired("table", "delta")
	cmd.MarkFlagsMutuallyExclusive("table", "delta")
	return cmd
}

func runMaintain(ctx context.Context, o *maintainOptions, p maintain.Policy) error {
	cfg := maintain.Config{Policy: p, Logger: o.g.Logger(), DryRun: o.dryRun}
	t, err := o.g.openTable(ctx, o.tbl.ref(), toChange.unlessDryRun(o.dryRun))
	if err != nil {
		return err
	}
	defer t.Close()
	cfg.CommitRetries = t.Retries
	prog := newProgress(o.g, "maintain", "")
	cfg.Progress = maintainProgress(prog)
	rep, err := maintain.Run(ctx, t.Table, cfg)
	prog.Done()
	if rep == nil || len(rep.Steps) == 0 {
		if errors.Is(err, maintain.ErrPolicy) {
			return &usageError{err}
		}
		return err
	}
	var werr error
	if o.g.JSON {
		werr = cli.WriteJSON(o.g.IO.Out, rep)
	} else {
		werr = writeMaintainReport(o.g.IO.Out, rep, o.g.IO.OutTTY)
	}
	if err == nil {
		err = werr
	}
	if cli.IsUsage(err) {
		// The policy asks for another layout than the table records, or
		// a vacuum retention below the table's.
		err = &usageError{err}
	}
	return err
}

func writeMaintainReport(out io.Writer, rep *maintain.Report, human bool) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "STEP\tSTATUS\tDURATION\tDETAIL")
	for _, s := range rep.Steps {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", s.Step, s.Status, s.Duration.Round(time.Millisecond), s.Detail)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	for _, warn := range rep.Warnings {
		fmt.Fprintf(out, "warning: %s\n", warn)
	}
	if rep.Before == nil {
		return nil
	}
	fmt.Fprintln(out)
	after := rep.After
	col := func(f func(*maintain.TableMetrics) string) string {
		if after == nil {
			return "-"
		}
		return f(after)
	}
	history := historyNoun(rep.Format)
	rows := []struct {
		name string
		f    func(*maintain.TableMetrics) string
	}{
		{"data files", func(m *maintain.TableMetrics) string { return fmt.Sprint(m.FileCount) }},
		{"average file size", func(m *maintain.TableMetrics) string { return cli.FormatBytes(m.AvgFileBytes, human) }},
		{"total bytes", func(m *maintain.TableMetrics) string { return cli.FormatBytes(m.TotalBytes, human) }},
		{"records", func(m *maintain.TableMetrics) string { return fmt.Sprint(m.TotalRecords) }},
		{"partitions", func(m *maintain.TableMetrics) string { return fmt.Sprint(len(m.Partitions)) }},
		{history + "s", func(m *maintain.TableMetrics) string { return fmt.Sprint(m.SnapshotCount) }},
		{"oldest " + history + " age", func(m *maintain.TableMetrics) string { return formatAge(m.OldestSnapshotAgeSeconds, human) }},
		{"manifests", func(m *maintain.TableMetrics) string { return fmt.Sprint(m.ManifestCount) }},
		{"delete files", func(m *maintain.TableMetrics) string { return fmt.Sprint(m.DeleteFileCount) }},
	}
	w = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "METRIC\tBEFORE\tAFTER")
	for _, r := range rows {
		fmt.Fprintf(w, "%s\t%s\t%s\n", r.name, r.f(rep.Before), col(r.f))
	}
	return w.Flush()
}
