package maintain

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/geocompact/geocompact/internal/rowgroup"
	"github.com/geocompact/geocompact/spatial"
	format "github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/table/icebergtable"
)

// TableMetrics describes a table's current state in the figures that tell
// whether it needs maintenance: how fragmented its data is (file count and
// average file size, overall and per partition), how long its snapshot
// history is, and how many manifests and delete files planning must read.
//
// File, byte and record figures count the live data files of the current
// snapshot only; delete files are counted apart in DeleteFileCount. A table
// without a snapshot has all figures zero and no partitions.
//
// A Delta table's metrics (Format FormatDelta, from Measure) count the
// versions in its log where an Iceberg table's count snapshots, and name
// them so when encoded (see MarshalJSON).
type TableMetrics struct {
	// Format is FormatDelta for a Delta table's metrics, empty for an
	// Iceberg table's.
	Format string `json:"format,omitempty"`
	// FileCount is the number of live data files.
	FileCount int64 `json:"file_count"`
	// AvgFileBytes is TotalBytes / FileCount, rounded down; 0 with no files.
	AvgFileBytes int64 `json:"avg_file_bytes"`
	// TotalBytes is the sum of the data files' sizes.
	TotalBytes int64 `json:"total_bytes"`
	// TotalRecords is the sum of the data files' record counts (before
	// deletes are applied).
	TotalRecords int64 `json:"total_records"`
	// SnapshotCount is the number of snapshots kept in the table metadata.
	SnapshotCount int `json:"snapshot_count"`
	// OldestSnapshotAgeSeconds is how long ago the oldest kept snapshot was
	// committed; 0 with no snapshots.
	OldestSnapshotAgeSeconds float64 `json:"oldest_snapshot_age_seconds"`
	// CurrentSnapshotAgeSeconds is how long ago the current snapshot was
	// committed; 0 with no current snapshot.
	CurrentSnapshotAgeSeconds float64 `json:"current_snapshot_age_seconds"`
	// ManifestCount is the number of manifests (data and delete) in the
	// current snapshot's manifest list.
	ManifestCount int `json:"manifest_count"`
	// DeleteFileCount is the number of live position and equality delete
	// files (deletion vectors included).
	DeleteFileCount int64 `json:"delete_file_count"`
	// Deletes is the table's delete debt by kind, nil when it has no live
	// deletes.
	Deletes *DeleteDebt `json:"deletes,omitempty"`
	// RowGroups are the row-group figures of all the live data files,
	// from their footers, for a table with spatial columns; nil unless
	// they were read (MeasureConfig.RowGroups).
	RowGroups *RowGroupHealth `json:"row_groups,omitempty"`
	// Partitions has one entry per partition holding live data files,
	// ordered by Partition.
	Partitions []PartitionMetrics `json:"partitions"`
}

// PartitionMetrics are the file figures of one partition.
type PartitionMetrics struct {
	// Partition is the partition rendered as Iceberg renders partition
	// paths, "ts_day=2026-01-01/device_id_bucket=3", with values escaped;
	// "" for an unpartitioned table.
	Partition string `json:"partition"`
	// FileCount is the number of live data files in the partition.
	FileCount int64 `json:"file_count"`
	// AvgFileBytes is TotalBytes / FileCount, rounded down.
	AvgFileBytes int64 `json:"avg_file_bytes"`
	// TotalBytes is the sum of the partition's data file sizes.
	TotalBytes int64 `json:"total_bytes"`
	// Layout is how well the partition's files are clustered, for a table
	// with spatial columns (nil otherwise).
	Layout *LayoutHealth `json:"layout,omitempty"`
	// Deletes is the partition's delete debt, nil when it has no live
	// deletes.
	Deletes *DeleteDebt `json:"deletes,omitempty"`
}

// Metrics reads tbl's metadata and the manifests of its current snapshot and
// returns its maintenance figures. It reads no data files. Ages are measured
// against the local clock, so a snapshot committed by a writer whose clock
// is ahead can show an age of zero, never a negative one.
func Metrics(ctx context.Context, tbl *table.Table) (*TableMetrics, error) {
	return metricsAt(ctx, tbl, time.Now(), MeasureConfig{})
}

// MetricsWindows is Metrics with the files each window plans per
// partition (LayoutHealth.MeanFilesPlanned) counted for windows.
func MetricsWindows(ctx context.Context, tbl *table.Table, windows []spatial.Bound) (*TableMetrics, error) {
	return metricsAt(ctx, tbl, time.Now(), MeasureConfig{Windows: windows})
}

// Measure returns the maintenance figures of t, a table opened at its
// latest version (table/icebergtable, table/deltatable), with the files
// each window of cfg plans per partition counted, and, when cfg asks,
// the row-group figures from the data files' footers. An Iceberg
// table's are MetricsWindows'. A table whose format counts its live files
// and log itself (a Delta table's) has the same figures from its latest
// version, read from the log only: files, bytes and records are the live
// files' sizes and record statistics (a file without statistics counts no
// records), before deletion vectors; DeleteFileCount counts the live
// files carrying a deletion vector. The snapshot figures count the
// versions whose commits are still in the log, and Format is the table's
// (FormatDelta), so they encode as versions. ManifestCount is 0: Delta
// has no manifests. Layout figures come from each file's bbox
// statistics, for tables with bbox columns.
func Measure(ctx context.Context, t format.Table, cfg MeasureConfig) (*TableMetrics, error) {
	switch f := t.Format.(type) {
	case censused:
		return censusMetrics(ctx, f, t.FormatName, time.Now(), cfg)
	case *icebergtable.Table:
		return metricsAt(ctx, f.Table, time.Now(), cfg)
	}
	return nil, fmt.Errorf("metrics %s: the table's format has no figures", t.Name)
}

// censusMetrics are the figures of the census f takes, in the format
// named formatName.
func censusMetrics(ctx context.Context, f censused, formatName string, now time.Time, cfg MeasureConfig) (*TableMetrics, error) {
	c, err := f.Census(ctx)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	m := &TableMetrics{Format: formatName, Partitions: []PartitionMetrics{}, SnapshotCount: c.Versions}
	m.OldestSnapshotAgeSeconds = snapshotAgeSeconds(now, c.Oldest.UnixMilli())
	m.CurrentSnapshotAgeSeconds = snapshotAgeSeconds(now, c.Latest.UnixMilli())
	var health *healthCollector
	if c.Bounded {
		health = &healthCollector{boxes: map[string][]spatial.Bound{}}
		if cfg.RowGroups {
			health.withFooters(c.BBoxPaths)
		}
	}
	tally := newFileTally(m)
	deletes := newDeleteTally()
	for _, cf := range c.Files {
		if cf.DeletionVector {
			m.DeleteFileCount++
			deletes.addVector(cf.Partition, cf.DeletedRecords, cf.DeleteBytes)
		}
		tally.add(cf.Partition, cf.Size, cf.Records)
		if health != nil {
			health.addBox(cf.Partition, cf.Bound, cf.HasBound, censusFooter(ctx, cf))
		}
	}
	if err := tally.finish(ctx, health, cfg.Windows); err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	deletes.finish(m, tally.records)
	return m, nil
}

// censusFooter reads the row groups of a census's file; nil when the
// format cannot open it.
func censusFooter(ctx context.Context, cf format.CensusFile) footerReader {
	if cf.Open == nil {
		return nil
	}
	open := func(string) (format.File, error) { return cf.Open(ctx) }
	return func(cols rowgroup.Columns) (rowgroup.File, error) {
		f, err := rowgroup.ReadFile(open, cf.Path, cols)
		f.Size = cf.Size
		return f, err
	}
}

func metricsAt(ctx context.Context, tbl *table.Table, now time.Time, cfg MeasureConfig) (*TableMetrics, error) {
	meta := tbl.Metadata()
	m := &TableMetrics{Partitions: []PartitionMetrics{}}
	snaps := meta.Snapshots()
	m.SnapshotCount = len(snaps)
	if len(snaps) > 0 {
		oldest := slices.MinFunc(snaps, func(a, b table.Snapshot) int { return cmp.Compare(a.TimestampMs, b.TimestampMs) })
		m.OldestSnapshotAgeSeconds = snapshotAgeSeconds(now, oldest.TimestampMs)
	}
	cur := tbl.CurrentSnapshot()
	if cur == nil {
		return m, nil
	}
	m.CurrentSnapshotAgeSeconds = snapshotAgeSeconds(now, cur.TimestampMs)

	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, fmt.Errorf("metrics %s: %w", catalogs.TableName(tbl), err)
	}
	manifests, err := cur.Manifests(fs)
	if err != nil {
		return nil, fmt.Errorf("metrics %s: read manifest list: %w", catalogs.TableName(tbl), err)
	}
	m.ManifestCount = len(manifests)
	tally := newFileTally(m)
	health := newHealthCollector(tbl)
	if cfg.RowGroups && health != nil {
		cols, _ := rowgroup.ColumnsOf(health.cols)
		health.withFooters(cols)
	}
	deletes := newDeleteTally()
	for _, mf := range manifests {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		entries, err := mf.FetchEntries(fs, true)
		if err != nil {
			return nil, fmt.Errorf("metrics %s: read manifest %s: %w", catalogs.TableName(tbl), mf.FilePath(), err)
		}
		for _, e := range entries {
			df := e.DataFile()
			key := icebergtable.PartitionPath(meta, df)
			if df.ContentType() != iceberg.EntryContentData {
				m.DeleteFileCount++
				deletes.addIceberg(key, df)
				continue
			}
			tally.add(key, df.FileSizeBytes(), df.Count())
			health.add(key, df, icebergFooter(fs, df))
		}
	}
	if err := tally.finish(ctx, health, cfg.Windows); err != nil {
		return nil, fmt.Errorf("metrics %s: %w", catalogs.TableName(tbl), err)
	}
	deletes.finish(m, tally.records)
	return m, nil
}

// icebergFooter reads the row groups of an Iceberg data file.
func icebergFooter(fs icebergio.IO, df iceberg.DataFile) footerReader {
	return func(cols rowgroup.Columns) (rowgroup.File, error) {
		f, err := rowgroup.ReadFile(fs.Open, df.FilePath(), cols)
		f.Size = df.FileSizeBytes()
		return f, err
	}
}

// fileTally adds live data files up into a TableMetrics' file figures,
// overall and per partition.
type fileTally struct {
	m     *TableMetrics
	parts map[string]*PartitionMetrics
	// records are each partition's records, before deletes.
	records map[string]int64
}

func newFileTally(m *TableMetrics) *fileTally {
	return &fileTally{m: m, parts: map[string]*PartitionMetrics{}, records: map[string]int64{}}
}

func (t *fileTally) add(partition string, bytes, records int64) {
	t.m.FileCount++
	t.m.TotalBytes += bytes
	t.m.TotalRecords += records
	p := t.parts[partition]
	if p == nil {
		p = &PartitionMetrics{Partition: partition}
		t.parts[partition] = p
	}
	p.FileCount++
	p.TotalBytes += bytes
	t.records[partition] += records
}

// finish sets the averages and the partitions, ordered, with their layout
// figures from health, reading the footers health gathered.
func (t *fileTally) finish(ctx context.Context, health *healthCollector, windows []spatial.Bound) error {
	if err := health.readFooters(ctx); err != nil {
		return err
	}
	t.m.RowGroups = health.rowGroups(windows)
	t.m.AvgFileBytes = metricsAvg(t.m.TotalBytes, t.m.FileCount)
	for _, p := range t.parts {
		p.AvgFileBytes = metricsAvg(p.TotalBytes, p.FileCount)
		p.Layout = health.health(p.Partition, windows)
		t.m.Partitions = append(t.m.Partitions, *p)
	}
	slices.SortFunc(t.m.Partitions, func(a, b PartitionMetrics) int { return cmp.Compare(a.Partition, b.Partition) })
	return nil
}

func snapshotAgeSeconds(now time.Time, tsMs int64) float64 {
	return max(0, now.Sub(time.UnixMilli(tsMs)).Seconds())
}

func metricsAvg(total, n int64) int64 {
	if n == 0 {
		return 0
	}
	return total / n
}
