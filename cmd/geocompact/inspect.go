package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/geocompact/geocompact/cmd/internal/cli"
	"github.com/geocompact/geocompact/inspect"
	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/deltatable"
)

func init() { register(newInspectCmd) }

type inspectOptions struct {
	g     *globalOptions
	flags tableFlags
	kind  inspect.Kind
}

// check checks that exactly one of --table and --delta is given, and
// that a --delta table has the metadata table asked for (none asked for
// by inspect schema).
func (o *inspectOptions) check() error {
	switch {
	case !o.flags.set():
		return usageErrorf("--table or --delta is required")
	case o.flags.name != "" && o.flags.location != "":
		return usageErrorf("give --table or --delta, not both")
	case o.flags.location != "" && o.kind != "" && !slices.Contains(deltatable.MetadataTables, string(o.kind)):
		return usageErrorf("inspect %s is for Iceberg tables; a Delta table has schema, files and history", o.kind)
	}
	return nil
}

func newInspectCmd(g *globalOptions) *cobra.Command {
	o := &inspectOptions{g: g}
	cmd := &cobra.Command{
		Use:   "inspect (schema|files|snapshots|manifests|partitions|history) (--table NS.T | --delta LOCATION)",
		Short: "Show a table's schema or its Iceberg metadata tables",
		Long: `Inspect schema prints the table's columns, geometry column, encoding, CRS,
partition spec, sort order and properties.

The other subcommands print one of the table's Iceberg metadata tables: its live files (with
record counts, sizes and bounding boxes), snapshots, manifests, partitions or
snapshot history. --json writes a JSON array with one object per row, keyed
by Iceberg's metadata table column names.

With --delta, schema, files and history read a Delta table's log: files
lists the live files of the latest version with their partition values,
record counts, sizes, bbox from the bbox columns' statistics and the rows
their deletion vectors remove; history lists the commits still in the log
with their operation, parameters and metrics.`,
		Example: `  $ geocompact inspect files --table demo.pings
  $ geocompact inspect snapshots --table demo.pings --json | jq '.[].operation'
  $ geocompact inspect history --delta ./lake/pings`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageErrorf("inspect needs schema or a metadata table: files, snapshots, manifests, partitions or history")
		},
	}
	o.flags.register(cmd.PersistentFlags(), "table to inspect, NAMESPACE.TABLE", "Delta table to inspect (schema, files, history)")
	cmd.AddCommand(newInspectSchemaCmd(o))
	short := map[inspect.Kind]string{
		inspect.Files:      "List the live data and delete files with their sizes and bounding boxes",
		inspect.Snapshots:  "List the snapshots with their operations and summaries",
		inspect.Manifests:  "List the current snapshot's manifests",
		inspect.Partitions: "List the partitions with their file counts and sizes",
		inspect.History:    "List the snapshots that were current, or a Delta table's commits, in order",
	}
	for _, kind := range inspect.Kinds {
		use := string(kind) + " --table NS.T"
		if slices.Contains(deltatable.MetadataTables, string(kind)) {
			use = string(kind) + " (--table NS.T | --delta LOCATION)"
		}
		cmd.AddCommand(&cobra.Command{
			Use:   use,
			Short: short[kind],
			Args:  cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				o.kind = kind
				if err := o.check(); err != nil {
					return err
				}
				return runInspect(cmd.Context(), o)
			},
		})
	}
	return cmd
}

// runInspect prints the metadata table o.kind of the table the flags
// name, in the columns of its format.
func runInspect(ctx context.Context, o *inspectOptions) error {
	t, err := o.g.openTable(ctx, o.flags.ref(), toDescribe)
	if err != nil {
		return err
	}
	defer t.Close()
	rows, err := inspect.Rows(ctx, t.Table, o.kind)
	if err != nil {
		return err
	}
	if o.g.JSON {
		return cli.WriteJSON(o.g.IO.Out, rows)
	}
	return writeRows(o.g.IO.Out, formatInspectColumns[t.FormatName][o.kind], rows, o.g.IO.OutTTY)
}

// inspectColumn is one column of an inspect text table.
type inspectColumn struct {
	header string
	cell   func(r inspect.Row, human bool) string
}

// writeRows prints rows as a text table of cols, with a header row.
func writeRows(out io.Writer, cols []inspectColumn, rows []inspect.Row, human bool) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	for i, c := range cols {
		if i > 0 {
			fmt.Fprint(w, "\t")
		}
		fmt.Fprint(w, c.header)
	}
	fmt.Fprintln(w)
	for _, r := range rows {
		for i, c := range cols {
			if i > 0 {
				fmt.Fprint(w, "\t")
			}
			fmt.Fprint(w, c.cell(r, human))
		}
		fmt.Fprintln(w)
	}
	return w.Flush()
}

// formatInspectColumns are the text columns of each metadata table, by
// table.Table.FormatName.
var formatInspectColumns = map[string]map[inspect.Kind][]inspectColumn{
	"":                inspectColumns,
	table.FormatDelta: deltaInspectColumns,
}

var inspectColumns = map[inspect.Kind][]inspectColumn{
	inspect.Files: {
		{"FILE", func(r inspect.Row, human bool) string { return pathCell(r, "file_path", human) }},
		{"CONTENT", func(r inspect.Row, _ bool) string { return contentCell(r, "content") }},
		{"PARTITION", partitionCell},
		{"RECORDS", col("record_count")},
		{"SIZE", bytesCol("file_size_in_bytes")},
		{"BBOX", bboxCell},
	},
	inspect.Snapshots: {
		{"COMMITTED AT", timeCol("committed_at")},
		{"SNAPSHOT ID", col("snapshot_id")},
		{"PARENT ID", col("parent_id")},
		{"OPERATION", col("operation")},
		{"ADDED FILES", summaryCol("added-data-files")},
		{"DELETED FILES", summaryCol("deleted-data-files")},
		{"TOTAL FILES", summaryCol("total-data-files")},
		{"TOTAL RECORDS", summaryCol("total-records")},
	},
	inspect.Manifests: {
		{"PATH", func(r inspect.Row, human bool) string { return pathCell(r, "path", human) }},
		{"CONTENT", func(r inspect.Row, _ bool) string {
			if c, _ := get(r, "content").(int32); c == 1 {
				return "deletes"
			}
			return "data"
		}},
		{"SPEC", col("partition_spec_id")},
		{"ADDED SNAPSHOT", col("added_snapshot_id")},
		{"ADDED", col("added_data_files_count")},
		{"EXISTING", col("existing_data_files_count")},
		{"DELETED", col("deleted_data_files_count")},
		{"SIZE", bytesCol("length")},
	},
	inspect.Partitions: {
		{"PARTITION", partitionCell},
		{"RECORDS", col("record_count")},
		{"FILES", col("file_count")},
		{"SIZE", bytesCol("total_data_file_size_in_bytes")},
		{"DELETE FILES", func(r inspect.Row, _ bool) string {
			p, _ := get(r, "position_delete_file_count").(int32)
			e, _ := get(r, "equality_delete_file_count").(int32)
			return strconv.Itoa(int(p + e))
		}},
		{"LAST UPDATED", timeCol("last_updated_at")},
	},
	inspect.History: {
		{"MADE CURRENT AT", timeCol("made_current_at")},
		{"SNAPSHOT ID", col("snapshot_id")},
		{"PARENT ID", col("parent_id")},
		{"CURRENT ANCESTOR", col("is_current_ancestor")},
	},
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

// bboxCell renders a file's bbox; "-" when it has none.
func bboxCell(r inspect.Row, _ bool) string {
	if b, ok := get(r, "bbox").(spatial.Bound); ok {
		return formatBound(b)
	}
	return "-"
}

func get(r inspect.Row, key string) any {
	v, _ := r.Get(key)
	return v
}

// cellString renders a scalar; null is "-".
func cellString(v any) string {
	switch v := v.(type) {
	case nil:
		return "-"
	case string:
		return v
	case time.Time:
		return v.Format(time.RFC3339Nano)
	}
	return fmt.Sprint(v)
}

func col(key string) func(inspect.Row, bool) string {
	return func(r inspect.Row, _ bool) string { return cellString(get(r, key)) }
}

func bytesCol(key string) func(inspect.Row, bool) string {
	return func(r inspect.Row, human bool) string {
		switch n := get(r, key).(type) {
		case int64:
			return cli.FormatBytes(n, human)
		case int32:
			return cli.FormatBytes(int64(n), human)
		}
		return "-"
	}
}

// timeCol renders a timestamp: to the second in local-free UTC on a
// terminal, RFC 3339 with full precision when piped.
func timeCol(key string) func(inspect.Row, bool) string {
	return func(r inspect.Row, human bool) string {
		t, ok := get(r, key).(time.Time)
		switch {
		case !ok:
			return "-"
		case human:
			return t.UTC().Format(time.DateTime)
		}
		return t.UTC().Format(time.RFC3339Nano)
	}
}

func summaryCol(key string) func(inspect.Row, bool) string {
	return func(r inspect.Row, _ bool) string {
		m, _ := get(r, "summary").(map[string]any)
		return cellString(m[key])
	}
}

// pathCell shows a file's base name on a terminal, its full path when
// piped.
func pathCell(r inspect.Row, key string, human bool) string {
	p, ok := get(r, key).(string)
	if !ok {
		return "-"
	}
	if human {
		return path.Base(p)
	}
	return p
}

func contentCell(r inspect.Row, key string) string {
	switch c, _ := get(r, key).(int32); c {
	case 1:
		return "position-deletes"
	case 2:
		return "equality-deletes"
	}
	return "data"
}

// partitionCell renders a partition struct as name=value/...; "-" for an
// unpartitioned table.
func partitionCell(r inspect.Row, _ bool) string {
	p, ok := get(r, "partition").(inspect.Row)
	if !ok || len(p) == 0 {
		return "-"
	}
	parts := make([]string, len(p))
	for i, f := range p {
		v := "null"
		if f.Value != nil {
			v = cellString(f.Value)
		}
		parts[i] = f.Key + "=" + v
	}
	return strings.Join(parts, "/")
}
