package main

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/geocompact/geocompact/engine"
)

// writeResult writes the result as geocompact rewrite does, plus the
// runner and the shuffled bytes.
func writeResult(out io.Writer, res *Result, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	r := res.Result
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "REWRITTEN FILES\tADDED FILES\tREWRITTEN BYTES\tFAILED FILES\tREMOVED DELETE FILES\tFILES BEFORE\tFILES AFTER\tBYTES BEFORE\tBYTES AFTER\tSNAPSHOTS\tRUNNER\tSHUFFLE BYTES\tDURATION")
	fmt.Fprintf(w, "%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%d\t%s\n",
		r.RewrittenDataFilesCount, r.AddedDataFilesCount, r.RewrittenBytesCount, r.FailedDataFilesCount,
		r.RemovedDeleteFilesCount, r.FilesBefore, r.FilesAfter, r.BytesBefore, r.BytesAfter, r.SnapshotsCommitted,
		res.Runner, res.ShuffleBytes, r.Duration.Round(time.Millisecond))
	if err := w.Flush(); err != nil {
		return err
	}
	switch {
	case r.NoopReason != "":
		_, err := fmt.Fprintf(out, "nothing rewritten: %s\n", r.NoopReason)
		return err
	case r.DryRun:
		_, err := fmt.Fprintf(out, "dry run: %d groups, %d files, %s would be rewritten; nothing was written\n",
			len(r.Plan.Groups), r.Plan.Files(), engine.FormatBytes(r.Plan.Bytes()))
		return err
	case r.Verified:
		_, err := fmt.Fprintln(out, "verified: rows, bbox extent and content checksum unchanged")
		return err
	}
	return nil
}
