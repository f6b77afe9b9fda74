package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/geocompact/geocompact/cmd/internal/cli"
	"github.com/geocompact/geocompact/maintain"
	"github.com/geocompact/geocompact/spatial"
)

func init() { register(newMetricsCmd) }

type metricsOptions struct {
	g *globalOptions
	// tbl is the table to measure: --table, or --delta for a Delta table.
	tbl     tableFlags
	format  string
	windows string
	// rowGroups reads the data files' footers for the row-group figures.
	rowGroups bool
}

func newMetricsCmd(g *globalOptions) *cobra.Command {
	o := &metricsOptions{g: g}
	cmd := &cobra.Command{
		Use:   "metrics (--table NS.T | --delta LOCATION) [--format text|json|prometheus]",
		Short: "Report a table's file, size and snapshot figures",
		Long: `Metrics reports what decides whether a table needs maintenance: its live data
files (count, average and total size, records), snapshots (count, age of the
oldest and of the current one), manifests and delete files, overall and per
partition. It reads metadata and manifests, and, for the row-group figures,
the footer of each data file (never its rows).

For a table with spatial columns it also reports each partition's layout
health from the files' bbox statistics: the mean and max overlap depth (how
many files' boxes cover a point: 1 is a perfect tiling, a table in arrival
order has every file everywhere) and, with --windows (the JSON window
format of bench), the mean files a window query plans there. They rise as
arrivals land between compactions and fall after a sorted rewrite.

The row-group figures, overall and per partition, come from the data files'
footers, read 8 at once: ROW GROUPS counts them; RG AREA is the mean of a
row group's bbox area against its file's, from the bbox columns' row group
statistics (bench's RG AREA: 1 for files of one row group, lower when a
sorted rewrite cuts them along its curve), "-" when no footer has those
statistics; RG READ is, with --windows, the mean row groups a window reads
in the files it plans, pruning by those statistics. --row-groups=false
reads no footer, for a table of very many files.

With --delta, the figures of a Delta table's latest version come from its
log: the live files' sizes and statistics (records before deletion vectors;
delete files are the files carrying a deletion vector), the versions still
in the log in place of snapshots (VERSIONS, version_count and
geocompact_table_version_count, and the version ages), and no manifests.
The layout figures use each file's minimum of bbox_minx and bbox_miny and
maximum of bbox_maxx and bbox_maxy (or of a bbox struct's xmin, ymin, xmax,
ymax): a file without those statistics is planned for every window.

--format prometheus writes the text exposition format for a node-exporter
textfile collector; write to a temporary file and rename it, so the
collector never reads half a file.`,
		Example: `  $ geocompact metrics --table demo.pings
  $ geocompact metrics --table demo.pings --format json
  $ geocompact metrics --table demo.pings --windows queries.json --format prometheus
  $ geocompact metrics --delta ./lake/pings --windows queries.json
  $ geocompact metrics --table demo.pings --format prometheus > /var/lib/node_exporter/demo.prom.$$ && mv /var/lib/node_exporter/demo.prom.$$ /var/lib/node_exporter/demo.prom`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.complete(cmd); err != nil {
				return err
			}
			return runMetrics(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	o.tbl.register(f, "table to measure, NAMESPACE.TABLE", "Delta table to measure")
	f.StringVar(&o.format, "format", "text", "output format: text, json or prometheus (--json means json)")
	f.StringVar(&o.windows, "windows", "", `JSON file of query windows [{"minx":..,"miny":..,"maxx":..,"maxy":..}, ...]: report the files each plans per partition`)
	f.BoolVar(&o.rowGroups, "row-groups", true, "read the data files' footers for the row-group figures")
	cmd.MarkFlagsOneRequired("table", "delta")
	cmd.MarkFlagsMutuallyExclusive("table", "delta")
	return cmd
}

// complete reconciles --format with the global --json.
func (o *metricsOptions) complete(cmd *cobra.Command) error {
	switch o.format {
	case "text", "json", "prometheus":
	default:
		return usageErrorf("--format %q: want text, json or prometheus", o.format)
	}
	if o.g.JSON {
		if cmd.Flags().Changed("format") && o.format != "json" {
			return usageErrorf("--json conflicts with --format %s", o.format)
		}
		o.format = "json"
	}
	return nil
}

func runMetrics(ctx context.Context, o *metricsOptions) error {
	var windows []spatial.Bound
	if o.windows != "" {
		var err error
		if windows, err = readWindowsFile(o.windows); err != nil {
			return err
		}
	}
	m, name, err := measure(ctx, o, windows)
	if err != nil {
		return err
	}
	switch o.format {
	case "json":
		return cli.WriteJSON(o.g.IO.Out, m)
	case "prometheus":
		return writePrometheus(o.g.IO.Out, name, m)
	}
	return writeMetricsTable(o.g.IO.Out, name, m, o.g.IO.OutTTY)
}

// measure returns the metrics of the --table or --delta table and the name
// that labels them.
func measure(ctx context.Context, o *metricsOptions, windows []spatial.Bound) (*maintain.TableMetrics, string, error) {
	ref := o.tbl.ref()
	t, err := o.g.openTable(ctx, ref, toDescribe)
	if err != nil {
		return nil, "", err
	}
	defer t.Close()
	m, err := maintain.Measure(ctx, t.Table, maintain.MeasureConfig{Windows: windows, RowGroups: o.rowGroups})
	return m, ref.String(), err
}

func writeMetricsTable(out io.Writer, name string, m *maintain.TableMetrics, human bool) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	h := strings.ToUpper(historyNoun(m.Format))
	fmt.Fprintf(w, "TABLE\tFILES\tAVG FILE\tTOTAL\tRECORDS\t%sS\tOLDEST %s AGE\tCURRENT %s AGE\tMANIFESTS\tDELETE FILES\t%s\n", h, h, h, rowGroupHeader)
	fmt.Fprintf(w, "%s\t%d\t%s\t%s\t%d\t%d\t%s\t%s\t%d\t%d\t%s\n", name, m.FileCount,
		cli.FormatBytes(m.AvgFileBytes, human), cli.FormatBytes(m.TotalBytes, human), m.TotalRecords, m.SnapshotCount,
		formatAge(m.OldestSnapshotAgeSeconds, human), formatAge(m.CurrentSnapshotAgeSeconds, human),
		m.ManifestCount, m.DeleteFileCount, rowGroupCells(m.RowGroups))
	if err := w.Flush(); err != nil {
		return err
	}
	if len(m.Partitions) == 0 {
		return nil
	}
	fmt.Fprintln(out)
	w = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "PARTITION\tFILES\tAVG FILE\tTOTAL\tOVERLAP MEAN\tOVERLAP MAX\tPLANNED PER WINDOW\t"+rowGroupHeader)
	for _, p := range m.Partitions {
		part := p.Partition
		if part == "" {
			part = "-"
		}
		mean, maxDepth, planned, rgs := "-", "-", "-", rowGroupCells(nil)
		if l := p.Layout; l != nil {
			mean, maxDepth = strconv.FormatFloat(l.MeanOverlapDepth, 'f', 2, 64), strconv.Itoa(l.MaxOverlapDepth)
			if l.MeanFilesPlanned != nil {
				planned = strconv.FormatFloat(*l.MeanFilesPlanned, 'f', 2, 64)
			}
			rgs = rowGroupCells(l.RowGroups)
		}
		fmt.Fprintf(w, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", part, p.FileCount, cli.FormatBytes(p.AvgFileBytes, human), cli.FormatBytes(p.TotalBytes, human), mean, maxDepth, planned, rgs)
	}
	if err := w.Flush(); err != nil || m.Deletes == nil {
		return err
	}
	return writeDeleteDebt(out, m, human)
}

// rowGroupHeader heads the row-group columns of both tables, as bench
// heads them.
const rowGroupHeader = "ROW GROUPS\tRG AREA\tRG READ"

// rowGroupCells are the row-group columns of r: "-" for what is not
// known (no footers read, no bbox statistics, no windows).
func rowGroupCells(r *maintain.RowGroupHealth) string {
	count, area, read := "-", "-", "-"
	if r != nil {
		count = strconv.FormatInt(r.Count, 10)
		if r.Area != nil {
			area = strconv.FormatFloat(*r.Area, 'f', 3, 64)
		}
		if r.MeanRead != nil {
			read = strconv.FormatFloat(*r.MeanRead, 'f', 2, 64)
		}
	}
	return count + "\t" + area + "\t" + read
}

// writeDeleteDebt writes the delete debt of each partition that has
// deletes, and the table's.
func writeDeleteDebt(out io.Writer, m *maintain.TableMetrics, human bool) error {
	fmt.Fprintln(out)
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "DELETES\tPOSITION FILES\tEQUALITY FILES\tVECTORS\tBYTES\tDELETED ROWS\tDELETED")
	row := func(name string, d *maintain.DeleteDebt) {
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%s\t%d\t%s\n", name, d.PositionDeleteFiles, d.EqualityDeleteFiles, d.DeletionVectors,
			cli.FormatBytes(d.DeleteBytes, human), d.DeletedRecords, strconv.FormatFloat(100*d.DeletedFraction, 'f', 2, 64)+"%")
	}
	for _, p := range m.Partitions {
		if p.Deletes != nil {
			row(cmp.Or(p.Partition, "-"), p.Deletes)
		}
	}
	row("(table)", m.Deletes)
	return w.Flush()
}

// historyNoun names what a table's history figures count: the snapshots
// of an Iceberg table, the versions in a Delta table's log (format
// maintain.FormatDelta).
func historyNoun(format string) string {
	if format == maintain.FormatDelta {
		return "version"
	}
	return "snapshot"
}

// readWindowsFile reads a --windows file (cli.ReadWindowsFile); its
// errors are usage errors.
func readWindowsFile(path string) ([]spatial.Bound, error) {
	ws, err := cli.ReadWindowsFile(path)
	if err != nil {
		return nil, &usageError{err}
	}
	return ws, nil
}

// formatAge renders an age in seconds as a duration on a terminal ("3h2m5s")
// and as seconds when piped.
func formatAge(sec float64, human bool) string {
	if !human {
		return strconv.FormatFloat(sec, 'f', 3, 64)
	}
	return (time.Duration(sec) * time.Second).String()
}

// promMetric is one metric family of the prometheus output.
type promMetric struct {
	name, help string
	value      func(*maintain.TableMetrics) float64
}

var promTableMetrics = []promMetric{
	{"file_count", "Live data files in the current snapshot.", func(m *maintain.TableMetrics) float64 { return float64(m.FileCount) }},
	{"avg_file_bytes", "Average size of the live data files, in bytes.", func(m *maintain.TableMetrics) float64 { return float64(m.AvgFileBytes) }},
	{"total_bytes", "Total size of the live data files, in bytes.", func(m *maintain.TableMetrics) float64 { return float64(m.TotalBytes) }},
	{"total_records", "Records in the live data files, before deletes.", func(m *maintain.TableMetrics) float64 { return float64(m.TotalRecords) }},
	{"snapshot_count", "Snapshots kept in the table metadata.", func(m *maintain.TableMetrics) float64 { return float64(m.SnapshotCount) }},
	{"oldest_snapshot_age_seconds", "Age of the oldest kept snapshot, in seconds.", func(m *maintain.TableMetrics) float64 { return m.OldestSnapshotAgeSeconds }},
	{"current_snapshot_age_seconds", "Age of the current snapshot, in seconds.", func(m *maintain.TableMetrics) float64 { return m.CurrentSnapshotAgeSeconds }},
	{"manifest_count", "Manifests in the current snapshot.", func(m *maintain.TableMetrics) float64 { return float64(m.ManifestCount) }},
	{"delete_file_count", "Live position and equality delete files.", func(m *maintain.TableMetrics) float64 { return float64(m.DeleteFileCount) }},
	{"partition_count", "Partitions holding live data files.", func(m *maintain.TableMetrics) float64 { return float64(len(m.Partitions)) }},
}

// promDelta names and describes, for a Delta table, the families whose
// Iceberg names or help speak of snapshots, manifests or delete files,
// keyed by their Iceberg name: a Delta table's history is the versions in
// its log (the names are metrics --json's).
var promDelta = map[string]struct{ name, help string }{
	"file_count":                   {"file_count", "Live data files in the latest version."},
	"snapshot_count":               {"version_count", "Versions whose commits are still in the Delta log."},
	"oldest_snapshot_age_seconds":  {"oldest_version_age_seconds", "Age of the oldest version in the log, in seconds."},
	"current_snapshot_age_seconds": {"current_version_age_seconds", "Age of the latest version, in seconds."},
	"manifest_count":               {"manifest_count", "Manifests: always 0, a Delta table has none."},
	"delete_file_count":            {"delete_file_count", "Live data files carrying a deletion vector."},
}

type promPartitionMetric struct {
	name, help string
	// value is the partition's figure; ok is false when it has none
	// (no spatial columns, or no windows given).
	value func(maintain.PartitionMetrics) (v float64, ok bool)
	// optional families are left out when no partition has a figure.
	optional bool
}

var promPartitionMetrics = []promPartitionMetric{
	{"partition_file_count", "Live data files in the partition.", func(p maintain.PartitionMetrics) (float64, bool) { return float64(p.FileCount), true }, false},
	{"partition_avg_file_bytes", "Average size of the partition's live data files, in bytes.", func(p maintain.PartitionMetrics) (float64, bool) { return float64(p.AvgFileBytes), true }, false},
	{"partition_total_bytes", "Total size of the partition's live data files, in bytes.", func(p maintain.PartitionMetrics) (float64, bool) { return float64(p.TotalBytes), true }, false},
	{"partition_overlap_depth_mean_files", "Mean, over the partition's files, of the files whose bbox covers the file's centre (1: no overlap).",
		layoutValue(func(l *maintain.LayoutHealth) float64 { return l.MeanOverlapDepth }), true},
	{"partition_overlap_depth_max_files", "Most files whose bboxes share one point in the partition.",
		layoutValue(func(l *maintain.LayoutHealth) float64 { return float64(l.MaxOverlapDepth) }), true},
	{"partition_unbounded_files", "Files of the partition without bbox statistics (they cover every point).",
		layoutValue(func(l *maintain.LayoutHealth) float64 { return float64(l.FilesWithoutBounds) }), true},
	{"partition_window_planned_mean_files", "Mean files of the partition a query window of --windows plans.",
		func(p maintain.PartitionMetrics) (float64, bool) {
			if p.Layout == nil || p.Layout.MeanFilesPlanned == nil {
				return 0, false
			}
			return *p.Layout.MeanFilesPlanned, true
		}, true},
	{"partition_row_group_count", "Row groups of the partition's data files, from their footers.",
		partitionRowGroups(func(r *maintain.RowGroupHealth) (float64, bool) { return float64(r.Count), true }), true},
	{"partition_row_group_area_ratio", rowGroupAreaHelp + " in the partition.",
		partitionRowGroups(rowGroupArea), true},
	{"partition_row_group_unbounded_files", "Files of the partition whose footers lack bbox statistics (their row groups are read whole).",
		partitionRowGroups(func(r *maintain.RowGroupHealth) (float64, bool) { return float64(r.FilesWithoutBounds), true }), true},
	{"partition_window_read_mean_row_groups", "Mean row groups of the partition a query window of --windows reads.",
		partitionRowGroups(rowGroupsRead), true},
	{"partition_position_delete_files", "Live Iceberg position delete files of the partition.",
		deletesValue(func(d *maintain.DeleteDebt) float64 { return float64(d.PositionDeleteFiles) }), true},
	{"partition_equality_delete_files", "Live Iceberg equality delete files of the partition.",
		deletesValue(func(d *maintain.DeleteDebt) float64 { return float64(d.EqualityDeleteFiles) }), true},
	{"partition_deletion_vectors", "Live deletion vectors (Iceberg v3 or Delta) of the partition's data files.",
		deletesValue(func(d *maintain.DeleteDebt) float64 { return float64(d.DeletionVectors) }), true},
	{"partition_delete_bytes", "Bytes of the partition's delete files and deletion vectors.",
		deletesValue(func(d *maintain.DeleteDebt) float64 { return float64(d.DeleteBytes) }), true},
	{"partition_deleted_fraction", "Rows deleted by position (delete files and vectors) over the partition's records.",
		deletesValue(func(d *maintain.DeleteDebt) float64 { return d.DeletedFraction }), true},
}

// deletesValue reads a delete debt figure of a partition that has deletes;
// a table with deletes reports 0 for its partitions without.
func deletesValue(f func(*maintain.DeleteDebt) float64) func(maintain.PartitionMetrics) (float64, bool) {
	return func(p maintain.PartitionMetrics) (float64, bool) {
		if p.Deletes == nil {
			return 0, false
		}
		return f(p.Deletes), true
	}
}

// rowGroupAreaHelp is the help of the row-group area families.
const rowGroupAreaHelp = "Mean ratio of a row group's bbox area to its file's (1: no tighter than the file), from the footers' bbox statistics"

// rowGroupArea is the row-group area ratio, when known.
func rowGroupArea(r *maintain.RowGroupHealth) (float64, bool) {
	if r.Area == nil {
		return 0, false
	}
	return *r.Area, true
}

// rowGroupsRead is the mean row groups a window reads, given windows.
func rowGroupsRead(r *maintain.RowGroupHealth) (float64, bool) {
	if r.MeanRead == nil {
		return 0, false
	}
	return *r.MeanRead, true
}

// promRowGroupMetrics are the table's row-group families, written after
// promTableMetrics when the footers were read; a figure not known (no
// bbox statistics, no windows) has no sample, and its family is left out.
var promRowGroupMetrics = []struct {
	name, help string
	value      func(*maintain.RowGroupHealth) (float64, bool)
}{
	{"row_group_count", "Row groups of the live data files, from their footers.",
		func(r *maintain.RowGroupHealth) (float64, bool) { return float64(r.Count), true }},
	{"row_group_area_ratio", rowGroupAreaHelp + ".", rowGroupArea},
	{"row_group_unbounded_files", "Live data files whose footers lack bbox statistics (their row groups are read whole).",
		func(r *maintain.RowGroupHealth) (float64, bool) { return float64(r.FilesWithoutBounds), true }},
	{"window_read_mean_row_groups", "Mean row groups a query window of --windows reads, pruning by the footers' bbox statistics.", rowGroupsRead},
}

// partitionRowGroups reads a row-group figure of a partition that has
// them.
func partitionRowGroups(f func(*maintain.RowGroupHealth) (float64, bool)) func(maintain.PartitionMetrics) (float64, bool) {
	return func(p maintain.PartitionMetrics) (float64, bool) {
		if p.Layout == nil || p.Layout.RowGroups == nil {
			return 0, false
		}
		return f(p.Layout.RowGroups)
	}
}

// layoutValue reads a layout health figure of a partition that has one.
func layoutValue(f func(*maintain.LayoutHealth) float64) func(maintain.PartitionMetrics) (float64, bool) {
	return func(p maintain.PartitionMetrics) (float64, bool) {
		if p.Layout == nil {
			return 0, false
		}
		return f(p.Layout), true
	}
}

// promPrefix starts every metric name.
const promPrefix = "geocompact_table_"

// writePrometheus writes m in the Prometheus text exposition format: every
// family with its HELP and TYPE lines, all gauges, labelled by table and,
// for the per-partition families, partition. A Delta table's families are
// named by promDelta.
func writePrometheus(out io.Writer, name string, m *maintain.TableMetrics) error {
	var b strings.Builder
	tableLabel := `table="` + promEscapeLabel(name) + `"`
	for _, pm := range promTableMetrics {
		name, help := pm.name, pm.help
		if d, ok := promDelta[name]; ok && m.Format == maintain.FormatDelta {
			name, help = d.name, d.help
		}
		fmt.Fprintf(&b, "# HELP %s%s %s\n# TYPE %s%s gauge\n", promPrefix, name, promEscapeHelp(help), promPrefix, name)
		fmt.Fprintf(&b, "%s%s{%s} %s\n", promPrefix, name, tableLabel, promValue(pm.value(m)))
	}
	for _, pm := range promRowGroupMetrics {
		if m.RowGroups == nil {
			break
		}
		if v, ok := pm.value(m.RowGroups); ok {
			fmt.Fprintf(&b, "# HELP %s%s %s\n# TYPE %s%s gauge\n", promPrefix, pm.name, promEscapeHelp(pm.help), promPrefix, pm.name)
			fmt.Fprintf(&b, "%s%s{%s} %s\n", promPrefix, pm.name, tableLabel, promValue(v))
		}
	}
	for _, pm := range promPartitionMetrics {
		var samples strings.Builder
		for _, p := range m.Partitions {
			if v, ok := pm.value(p); ok {
				fmt.Fprintf(&samples, "%s%s{%s,partition=\"%s\"} %s\n", promPrefix, pm.name, tableLabel, promEscapeLabel(p.Partition), promValue(v))
			}
		}
		if samples.Len() == 0 && pm.optional {
			continue // a family the table has no figure for
		}
		fmt.Fprintf(&b, "# HELP %s%s %s\n# TYPE %s%s gauge\n%s", promPrefix, pm.name, promEscapeHelp(pm.help), promPrefix, pm.name, samples.String())
	}
	_, err := io.WriteString(out, b.String())
	return err
}

// promEscapeLabel escapes a label value: backslash, double quote and line
// feed.
func promEscapeLabel(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}

// promEscapeHelp escapes HELP text: backslash and line feed.
func promEscapeHelp(s string) string {
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`).Replace(s)
}

func promValue(v float64) string {
	return strconv.FormatFloat(v, 'g', -1, 64)
}
