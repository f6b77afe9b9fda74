package maintain

import (
	"context"
	"fmt"
	"time"

	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/spatial"
)

// DeltaMetrics is MetricsWindows for a Delta table: the same figures from
// its latest version, read from the log only (no data files).
//
// Files, bytes and records are the live add actions' sizes and numRecords
// statistics (a file without statistics counts no records), before
// deletion vectors; DeleteFileCount counts the live files carrying a
// deletion vector. The snapshot figures count the versions whose commits
// are still in the log, their ages from delta.Table.History, and Format is
// FormatDelta, so they encode as versions. ManifestCount is 0: Delta
// has no manifests. Partitions are named by delta.Snapshot.PartitionPath.
// Layout figures come from each file's bbox statistics
// (delta.Snapshot.FileBound), for tables with bbox columns.
func DeltaMetrics(ctx context.Context, tbl *delta.Table, windows []spatial.Bound) (*TableMetrics, error) {
	return deltaMetricsAt(ctx, tbl, time.Now(), windows)
}

func deltaMetricsAt(ctx context.Context, tbl *delta.Table, now time.Time, windows []spatial.Bound) (*TableMetrics, error) {
	s, err := tbl.Snapshot(ctx)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	history, err := tbl.History(ctx)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	m := &TableMetrics{Format: FormatDelta, Partitions: []PartitionMetrics{}, SnapshotCount: len(history)}
	m.OldestSnapshotAgeSeconds = snapshotAgeSeconds(now, history[0].Timestamp.UnixMilli())
	m.CurrentSnapshotAgeSeconds = snapshotAgeSeconds(now, history[len(history)-1].Timestamp.UnixMilli())

	// Bbox columns suffice for the layout figures; a table whose geometry
	// column is not found still has them.
	cols, _ := s.SpatialColumns("")
	var health *healthCollector
	if cols.HasBBox() || cols.Covering != "" {
		health = &healthCollector{boxes: map[string][]spatial.Bound{}}
	}
	tally := newFileTally(m)
	deletes := newDeleteTally()
	for _, f := range s.Files {
		var records int64
		if st, err := f.ParsedStats(); err == nil && st != nil {
			records = st.NumRecords
		}
		key := s.PartitionPath(f)
		if f.DeletionVector != nil {
			m.DeleteFileCount++
			deletes.addDelta(key, f.DeletionVector)
		}
		tally.add(key, f.Size, records)
		if health != nil {
			b, ok := s.FileBound(f, cols)
			health.addBox(key, b, ok)
		}
	}
	tally.finish(health, windows)
	deletes.finish(m, tally.records)
	return m, nil
}
