package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/ingest"
)

// completeDelta checks the flags of an ingest into a Delta table.
func (o *ingestOptions) completeDelta() error {
	if o.cfg.FormatVersion != 2 {
		return usageErrorf("--format-version applies to Iceberg tables only, not with --delta")
	}
	if o.cfg.AddColumns {
		return usageErrorf("--add-columns is not supported with --delta; use --drop-extra-columns to leave extra columns out")
	}
	if !o.cfg.Create && o.cfg.PartitionBy != "" {
		return usageErrorf("--partition-by applies only with --create")
	}
	if o.cfg.DropExtraColumns && o.cfg.AddColumns {
		return usageErrorf("--drop-extra-columns and --add-columns exclude each other")
	}
	if err := o.cfg.Checks.Validate(); err != nil {
		return &usageError{err}
	}
	o.cfg.Logger = o.g.Logger()
	return nil
}

// runIngestDelta ingests into the Delta table at o.delta; its output and
// exit codes are those of an Iceberg ingest, with a version for a snapshot.
func runIngestDelta(ctx context.Context, o *ingestOptions) error {
	cfg := o.cfg
	prog := newProgress(o.g, "validating", "files")
	cfg.Progress = prog.Update
	res, err := ingest.RunDelta(ctx, o.delta, cfg)
	prog.Done()
	if err != nil {
		return ingestDeltaError(o, err)
	}
	for _, s := range res.Skipped {
		fmt.Fprintf(o.g.IO.ErrOut, "skipped %s: %s\n", displayName(s.Path), deltaSkipReason(s))
	}
	if res.Files == 0 && len(res.Skipped) > 0 {
		fmt.Fprintf(o.g.IO.ErrOut, "nothing to ingest: every file is already in %s (version %d unchanged)\n", res.Location, res.Version)
	}
	if o.g.JSON {
		return json.NewEncoder(o.g.IO.Out).Encode(res)
	}
	tw := tabwriter.NewWriter(o.g.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "LOCATION\tCREATED\tFILES\tDATA_FILES\tROWS\tVERSION")
	fmt.Fprintf(tw, "%s\t%v\t%d\t%d\t%d\t%d\n", res.Location, res.Created, res.Files, res.DataFiles, res.Rows, res.Version)
	return tw.Flush()
}

// ingestDeltaError gives a failed Delta ingest its exit code: 3 with the
// validation reports on stdout for refused files, 2 for bad flags, 4 for
// a commit that lost to a concurrent change.
func ingestDeltaError(o *ingestOptions, err error) error {
	if refused, ok := errors.AsType[*ingest.RefusedError](err); ok {
		if werr := writeValidateResult(o.g.IO.Out, o.g.JSON, refusedResult(refused)); werr != nil {
			return werr
		}
		return &exitCodeError{code: exitViolation, err: err}
	}
	switch {
	case errors.Is(err, ingest.ErrPartitionSpec):
		return usageErrorf("--partition-by: %v", err)
	case errors.Is(err, ingest.ErrConfig):
		return &usageError{err}
	case errors.As(err, new(*delta.ConflictError)), errors.As(err, new(*delta.VersionExistsError)):
		return &exitCodeError{code: exitConflict, err: err}
	}
	return err
}

// deltaSkipReason says why a Delta ingest left a file out and how to
// include it.
func deltaSkipReason(s ingest.DeltaSkipped) string {
	if s.Version == nil {
		return fmt.Sprintf("same content as %s in this batch", displayName(s.Previous))
	}
	return fmt.Sprintf("already ingested in version %d (use --allow-duplicates to append it again)", *s.Version)
}
