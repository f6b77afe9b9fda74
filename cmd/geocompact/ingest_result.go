package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/geocompact/geocompact/ingest"
)

// An ingest's result is printed in its format's terms: an Iceberg table
// by name and snapshot, a Delta table by location, version and data
// files. The JSON documents keep those keys.

// icebergIngestJSON is an Iceberg ingest's --json document.
type icebergIngestJSON struct {
	Table        string               `json:"table"`
	Created      bool                 `json:"created"`
	SnapshotID   int64                `json:"snapshot_id"`
	Committed    bool                 `json:"committed"`
	Files        int                  `json:"files"`
	Rows         int64                `json:"rows"`
	AddedColumns []string             `json:"added_columns,omitempty"`
	Skipped      []icebergSkippedJSON `json:"skipped,omitempty"`
}

type icebergSkippedJSON struct {
	Path       string `json:"path"`
	Digest     string `json:"sha256"`
	Previous   string `json:"previous"`
	SnapshotID int64  `json:"snapshot_id,omitempty"`
}

// deltaIngestJSON is a Delta ingest's --json document.
type deltaIngestJSON struct {
	Location  string             `json:"location"`
	Created   bool               `json:"created"`
	Version   int64              `json:"version"`
	Files     int                `json:"files"`
	DataFiles int                `json:"data_files"`
	Rows      int64              `json:"rows"`
	Skipped   []deltaSkippedJSON `json:"skipped,omitempty"`
}

type deltaSkippedJSON struct {
	Path     string `json:"path"`
	Digest   string `json:"sha256"`
	Previous string `json:"previous,omitempty"`
	Version  *int64 `json:"version,omitempty"`
}

func writeIcebergIngest(g *globalOptions, res *ingest.Result) error {
	for _, s := range res.Skipped {
		fmt.Fprintf(g.IO.ErrOut, "skipped %s: %s\n", displayName(s.Path), skipReason(s, "snapshot"))
	}
	if g.JSON {
		doc := icebergIngestJSON{Table: res.Table, Created: res.Created, SnapshotID: res.Commit, Committed: res.Committed,
			Files: res.Files, Rows: res.Rows, AddedColumns: res.AddedColumns}
		for _, s := range res.Skipped {
			doc.Skipped = append(doc.Skipped, icebergSkippedJSON{Path: s.Path, Digest: s.Digest, Previous: s.Previous, SnapshotID: commitOf(s)})
		}
		return json.NewEncoder(g.IO.Out).Encode(doc)
	}
	snapshot := strconv.FormatInt(res.Commit, 10)
	if !res.Committed {
		snapshot = "-"
		fmt.Fprintf(g.IO.ErrOut, "nothing committed: all %d files were skipped; %s is unchanged\n", len(res.Skipped), res.Table)
	}
	tw := tabwriter.NewWriter(g.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TABLE\tCREATED\tFILES\tROWS\tSNAPSHOT")
	fmt.Fprintf(tw, "%s\t%v\t%d\t%d\t%s\n", res.Table, res.Created, res.Files, res.Rows, snapshot)
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(res.AddedColumns) > 0 {
		fmt.Fprintf(g.IO.ErrOut, "added columns to %s: %s\n", res.Table, strings.Join(res.AddedColumns, ", "))
	}
	return nil
}

func writeDeltaIngest(g *globalOptions, res *ingest.Result) error {
	for _, s := range res.Skipped {
		fmt.Fprintf(g.IO.ErrOut, "skipped %s: %s\n", displayName(s.Path), skipReason(s, "version"))
	}
	if res.Files == 0 && len(res.Skipped) > 0 {
		fmt.Fprintf(g.IO.ErrOut, "nothing to ingest: every file is already in %s (version %d unchanged)\n", res.Table, res.Commit)
	}
	if g.JSON {
		doc := deltaIngestJSON{Location: res.Table, Created: res.Created, Version: res.Commit,
			Files: res.Files, DataFiles: res.DataFiles, Rows: res.Rows}
		for _, s := range res.Skipped {
			doc.Skipped = append(doc.Skipped, deltaSkippedJSON{Path: s.Path, Digest: s.Digest, Previous: s.Previous, Version: s.Commit})
		}
		return json.NewEncoder(g.IO.Out).Encode(doc)
	}
	tw := tabwriter.NewWriter(g.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "LOCATION\tCREATED\tFILES\tDATA_FILES\tROWS\tVERSION")
	fmt.Fprintf(tw, "%s\t%v\t%d\t%d\t%d\t%d\n", res.Table, res.Created, res.Files, res.DataFiles, res.Rows, res.Commit)
	return tw.Flush()
}

func commitOf(s ingest.Skipped) int64 {
	if s.Commit == nil {
		return 0
	}
	return *s.Commit
}

// skipReason says why an ingest left a file out and how to include it;
// commit is what its format calls a commit.
func skipReason(s ingest.Skipped, commit string) string {
	if s.Commit == nil {
		return fmt.Sprintf("same content as %s in this batch", displayName(s.Previous))
	}
	if s.Previous == "" {
		return fmt.Sprintf("already ingested in %s %d (use --allow-duplicates to append it again)", commit, *s.Commit)
	}
	return fmt.Sprintf("already ingested as %s in %s %d (use --allow-duplicates to append it again)", displayName(s.Previous), commit, *s.Commit)
}
