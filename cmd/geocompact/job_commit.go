package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/spf13/cobra"

	"github.com/geocompact/geocompact/cmd/internal/cli"
	"github.com/geocompact/geocompact/engine/verify"
	"github.com/geocompact/geocompact/job"
)

type jobCommitOptions struct {
	g   *globalOptions
	job jobRef
}

func newJobCommitCmd(g *globalOptions) *cobra.Command {
	o := &jobCommitOptions{g: g}
	cmd := &cobra.Command{
		Use:   "commit --job FILE_OR_ID [RESULTS...]",
		Short: "Verify the units' results and commit them as one replace",
		Long: `Commit reads the result lines of job work, every stage's (from the files
given, else from stdin), keeps one result per unit (the first), verifies each
group (the rows written are the rows read), and replaces the planned files in one snapshot
tagged with the job's id, with the conflict checks of geocompact rewrite. It
then deletes every file of the job that no metadata references (those of
attempts whose results were not kept), the job's record, and what jobs whose
drivers stopped left. A failed commit changes nothing and deletes the job's
files: plan again. Exit code 4 is a conflict with another writer (plan again
and retry).`,
		Example: `  $ geocompact job commit --job job.json results.jsonl
  $ cat results-*.jsonl | geocompact job commit --job job.json --json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runJobCommit(cmd.Context(), o, args)
		},
	}
	o.job.register(cmd)
	return cmd
}

func runJobCommit(ctx context.Context, o *jobCommitOptions, paths []string) error {
	cat, _, err := o.g.openCatalog(ctx)
	if err != nil {
		return err
	}
	j, err := o.job.load(ctx, cat)
	if err != nil {
		return err
	}
	j.Request.Logger = o.g.Logger()
	if len(j.Groups) == 0 {
		return writeRewriteResult(o.g, j.Result)
	}
	rs, err := readUnitResults(j, o.g.IO.In, paths)
	if err == nil {
		var files [][]iceberg.DataFile
		var in, out []verify.Digest
		if files, in, out, err = j.Gather(rs); err == nil {
			_, err = j.Commit(ctx, cat, files, in, out)
		}
	}
	if err != nil {
		if aerr := abortJob(context.WithoutCancel(ctx), cat, j); aerr != nil {
			err = errors.Join(err, aerr)
		}
		if cli.IsUsage(err) {
			return &usageError{err}
		}
		return err
	}
	// What failed or repeated attempts wrote, and whole jobs whose drivers
	// stopped; a failure to delete them is not the commit's (the next
	// commit, or orphans, finds them).
	bg := context.WithoutCancel(ctx)
	if _, aerr := j.Abort(bg, cat); aerr == nil {
		_ = j.RemoveMarker(bg)
	}
	_, _ = job.Sweep(bg, cat, j.Table, j.ID)
	return writeRewriteResult(o.g, j.Result)
}

// readUnitResults reads the result lines in the files at paths (stdin
// when none).
func readUnitResults(j *job.Rewrite, stdin io.Reader, paths []string) ([]job.Result, error) {
	var rs []job.Result
	read := func(r io.Reader, name string) error {
		return jsonLines(r, func(line []byte) error {
			var res job.Result
			if err := json.Unmarshal(line, &res); err != nil {
				return fmt.Errorf("read results %s: %w: %.80q", name, err, line)
			}
			if res.Job != j.ID {
				return fmt.Errorf("read results %s: a result of job %s, not of job %s", name, res.Job, j.ID)
			}
			rs = append(rs, res)
			return nil
		})
	}
	if len(paths) == 0 {
		return rs, read(stdin, "(stdin)")
	}
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, fmt.Errorf("read results: %w", err)
		}
		err = read(f, p)
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	return rs, nil
}

// abortJob deletes every file of j that no metadata references, then its
// record.
func abortJob(ctx context.Context, cat catalog.Catalog, j *job.Rewrite) error {
	if _, err := j.Abort(ctx, cat); err != nil {
		return err
	}
	if err := j.Open(ctx, cat); err != nil {
		return err
	}
	return j.RemoveMarker(ctx)
}
