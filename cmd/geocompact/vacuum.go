package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/geocompact/geocompact/cmd/internal/cli"
	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/maintain"
)

func init() { register(newVacuumCmd) }

type vacuumOptions struct {
	g        *globalOptions
	location string
	retain   string
	dryRun   bool
	force    bool
}

// vacuumDeleted, when set, is told of each file vacuum deletes. It is nil
// in the command; tests set it to stop a vacuum part way.
var vacuumDeleted func(delta.FileInfo)

func newVacuumCmd(g *globalOptions) *cobra.Command {
	o := &vacuumOptions{g: g}
	cmd := &cobra.Command{
		Use:   "vacuum --delta LOCATION",
		Short: "Delete the files a Delta table no longer references, past its retention",
		Long: `Vacuum does what Delta Lake's VACUUM does: it lists the files under the table
location and deletes those that the current version does not reference and
that were removed (or, for files no commit ever added, last written) longer
ago than the retention. The transaction log and every file or directory whose
name starts with '_' or '.' (other than partition directories) are never
touched, except the temporary files a killed writer leaves (".NAME.tmp-N" of
a data file, a commit, a checkpoint or _last_checkpoint): those are deleted
once older than both the retention and one hour, so that even a forced
--retain 0h never deletes a file a live writer is still writing.

The retention defaults to the table's delta.deletedFileRetentionDuration
(7 days when unset). That is also the floor: a shorter --retain needs --force,
as older readers and in-flight writers may still need those files. Tables with
the vacuumProtocolCheck feature are vacuumed only when every writer feature is
supported. --dry-run lists the files and deletes nothing.

On S3 (s3://BUCKET/PREFIX), the AWS SDK's usual settings apply: AWS_REGION,
credentials from the environment or a profile, and AWS_ENDPOINT_URL_S3 for an
S3-compatible store.`,
		Example: `  $ geocompact vacuum --delta ./lake/pings --dry-run
  $ geocompact vacuum --delta ./lake/pings --retain 14d`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			retain := delta.TableRetention
			if cmd.Flags().Changed("retain") {
				d, err := parseRetain(o.retain)
				if err != nil {
					return usageErrorf("--retain: %w", err)
				}
				retain = d
			}
			return runVacuum(cmd.Context(), o, delta.VacuumConfig{Retain: retain, Force: o.force, DryRun: o.dryRun, Deleted: vacuumDeleted})
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.location, "delta", "", "Delta table location: a directory, file: URL or s3://BUCKET/PREFIX (required)")
	f.StringVar(&o.retain, "retain", "", "keep files removed less than this long ago (7d, 168h, \"interval 7 days\"); default: the table's delta.deletedFileRetentionDuration")
	f.BoolVar(&o.dryRun, "dry-run", false, "list the files that would be deleted; delete nothing")
	f.BoolVar(&o.force, "force", false, "allow --retain below the table's delta.deletedFileRetentionDuration")
	_ = cmd.MarkFlagRequired("delta")
	return cmd
}

// parseRetain reads a retention the way the other maintenance commands do
// (7d, 36h) or as a Spark interval ("interval 7 days", "168 hours"). A
// value that reads as one of them but is negative or too long is refused
// saying so.
func parseRetain(s string) (time.Duration, error) {
	d, err := maintain.ParseDuration(s)
	if de, ok := errors.AsType[*maintain.DurationError](err); err == nil || ok && de.OutOfRange {
		return d, err
	}
	d, ierr := delta.ParseInterval(s)
	if ierr == nil {
		return d, nil
	}
	if strings.ContainsAny(strings.TrimSpace(s), " \t") {
		return 0, ierr // written as an interval: its own reason
	}
	return 0, err
}

func runVacuum(ctx context.Context, o *vacuumOptions, cfg delta.VacuumConfig) error {
	tbl, err := delta.Open(ctx, o.location)
	if err != nil {
		return fmt.Errorf("open Delta table %s: %w", o.location, err)
	}
	res, runErr := tbl.Vacuum(ctx, o.location, cfg)
	if re, ok := errors.AsType[*delta.RetentionError](runErr); ok {
		return usageErrorf("--retain %s is below the table's delta.deletedFileRetentionDuration of %s; "+
			"readers of older versions and writers that have not committed yet may still need those files: "+
			"keep the default, or pass --force", maintain.FormatDuration(re.Retain), maintain.FormatDuration(re.Floor))
	}
	if res == nil {
		return fmt.Errorf("vacuum %s: %w", o.location, runErr)
	}
	if runErr != nil {
		runErr = fmt.Errorf("vacuum %s: %w", o.location, runErr)
	}
	var werr error
	if o.g.JSON {
		werr = cli.WriteJSON(o.g.IO.Out, res)
	} else {
		werr = writeVacuumResult(o.g, res)
	}
	return errors.Join(runErr, werr)
}

func writeVacuumResult(g *globalOptions, res *delta.VacuumResult) error {
	out, human := g.IO.Out, g.IO.OutTTY
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	if len(res.Files) > 0 {
		fmt.Fprintln(w, "BYTES\tPATH")
		for _, f := range res.Files {
			fmt.Fprintf(w, "%s\t%s\n", cli.FormatBytes(f.Bytes, human), displayName(f.Path))
		}
		fmt.Fprintln(w)
	}
	if len(res.Kept) > 0 {
		fmt.Fprintln(w, "KEPT\tPATH")
		for _, k := range res.Kept {
			fmt.Fprintf(w, "%s\t%s\n", k.Reason, displayName(k.Path))
		}
		fmt.Fprintln(w)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(out, vacuumSummary(res))
	return err
}

// vacuumSummary is the line that says what a vacuum did, for vacuum and
// for sql's VACUUM.
func vacuumSummary(res *delta.VacuumResult) string {
	cut := fmt.Sprintf("at version %d, retaining %s (before %s)", res.Version, maintain.FormatDuration(res.Retain()), res.Cutoff.Format(time.RFC3339))
	switch {
	case len(res.Files) == 0:
		return fmt.Sprintf("nothing to vacuum %s: every file is referenced or inside the retention%s", cut, keptLinksNote(res))
	case res.DryRun:
		return fmt.Sprintf("dry run: %d files (%s%s) would be deleted %s; nothing was deleted%s", len(res.Files), cli.FormatBytes(res.Bytes, true), tempNote(res), cut, keptLinksNote(res))
	}
	return fmt.Sprintf("deleted %d files (%s%s) %s%s", res.DeletedCount, cli.FormatBytes(res.Bytes, true), tempNote(res), cut, keptLinksNote(res))
}

// keptLinksNote says how many symbolic links a vacuum kept; "" when none.
func keptLinksNote(res *delta.VacuumResult) string {
	if res.KeptCount == 0 {
		return ""
	}
	return fmt.Sprintf("; kept %d symbolic links (never followed, never deleted)", res.KeptCount)
}

// tempNote says how many of a vacuum's files are temporary files killed
// writers left; "" when none are.
func tempNote(res *delta.VacuumResult) string {
	if res.TempFiles == 0 {
		return ""
	}
	return fmt.Sprintf(", %d of them temporary files of killed writers", res.TempFiles)
}
