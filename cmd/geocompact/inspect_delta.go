package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/geocompact/geocompact/cmd/internal/cli"
	"github.com/geocompact/geocompact/inspect"
)

// runInspectDelta prints the files or history of the --delta table.
func runInspectDelta(ctx context.Context, o *inspectOptions) error {
	tbl, err := openDelta(ctx, o.delta)
	if err != nil {
		return err
	}
	rows, err := inspect.DeltaRows(ctx, tbl, o.kind)
	if err != nil {
		return fmt.Errorf("inspect %s: %w", o.delta, err)
	}
	if o.g.JSON {
		return cli.WriteJSON(o.g.IO.Out, rows)
	}
	return writeRows(o.g.IO.Out, deltaInspectColumns[o.kind], rows, o.g.IO.OutTTY)
}

var deltaInspectColumns = map[inspect.Kind][]inspectColumn{
	inspect.Files: {
		{"FILE", func(r inspect.Row, human bool) string { return pathCell(r, "file_path", human) }},
		{"PARTITION", partitionCell},
		{"RECORDS", col("record_count")},
		{"SIZE", bytesCol("file_size_in_bytes")},
		{"BBOX", bboxCell},
		{"DELETED ROWS", col("deletion_vector_cardinality")},
	},
	inspect.History: {
		{"VERSION", col("version")},
		{"TIMESTAMP", timeCol("timestamp")},
		{"OPERATION", col("operation")},
		{"PARAMETERS", jsonCol("operation_parameters")},
		{"METRICS", jsonCol("operation_metrics")},
	},
}

// jsonCol renders a map as compact JSON with sorted keys; "-" when absent.
func jsonCol(key string) func(inspect.Row, bool) string {
	return func(r inspect.Row, _ bool) string {
		v := get(r, key)
		if v == nil {
			return "-"
		}
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return fmt.Sprint(v)
		}
		return strings.TrimSuffix(b.String(), "\n")
	}
}
