package maintain_test

import (
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/google/go-cmp/cmp"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/maintain"
	"github.com/geocompact/geocompact/table/catalogs"
)

// generatedTable builds a small table with bench.Generate in a fresh
// embedded catalog and loads it.
func generatedTable(t testing.TB, cat catalog.Catalog, cfg bench.GenerateConfig) *table.Table {
	t.Helper()
	if cat == nil {
		var err error
		cat, err = catalogs.Open(t.Context(), catalogs.Spec{Warehouse: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := bench.Generate(t.Context(), cat, cfg); err != nil {
		t.Fatalf("generate %s: %v", cfg.Table, err)
	}
	tbl, err := catalogs.LoadTable(t.Context(), cat, cfg.Table)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

func TestMetrics(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		cfg       bench.GenerateConfig
		wantParts []string
	}{
		{
			name:      "unpartitioned v2",
			cfg:       bench.GenerateConfig{Table: "m.v2", Rows: 600, Commits: 4, Seed: 1},
			wantParts: []string{""},
		},
		{
			name:      "unpartitioned v3",
			cfg:       bench.GenerateConfig{Table: "m.v3", Rows: 500, Commits: 3, FormatVersion: 3, Seed: 2},
			wantParts: []string{""},
		},
		{
			name:      "by day",
			cfg:       bench.GenerateConfig{Table: "m.days", Rows: 900, Commits: 6, PartitionBy: "day(ts)", Seed: 3},
			wantParts: []string{"ts_day=2026-01-01", "ts_day=2026-01-02", "ts_day=2026-01-03"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tbl := generatedTable(t, nil, tc.cfg)
			m, err := maintain.Metrics(t.Context(), tbl)
			if err != nil {
				t.Fatal(err)
			}
			tasks, err := tbl.Scan().PlanFiles(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			var wantBytes int64
			for _, task := range tasks {
				wantBytes += task.File.FileSizeBytes()
			}
			if m.FileCount != int64(len(tasks)) || m.TotalBytes != wantBytes {
				t.Errorf("files %d, bytes %d; want %d, %d (from scan planning)", m.FileCount, m.TotalBytes, len(tasks), wantBytes)
			}
			if tc.cfg.PartitionBy == "" && m.FileCount != int64(tc.cfg.Commits) {
				t.Errorf("files %d, want one per commit (%d)", m.FileCount, tc.cfg.Commits)
			}
			if m.AvgFileBytes != m.TotalBytes/m.FileCount {
				t.Errorf("avg %d, want %d", m.AvgFileBytes, m.TotalBytes/m.FileCount)
			}
			if m.TotalRecords != tc.cfg.Rows {
				t.Errorf("records %d, want %d", m.TotalRecords, tc.cfg.Rows)
			}
			if m.SnapshotCount != tc.cfg.Commits || m.ManifestCount != tc.cfg.Commits {
				t.Errorf("snapshots %d, manifests %d; want %d each (one fast append per commit)", m.SnapshotCount, m.ManifestCount, tc.cfg.Commits)
			}
			if m.DeleteFileCount != 0 {
				t.Errorf("delete files %d, want 0", m.DeleteFileCount)
			}
			if !(m.OldestSnapshotAgeSeconds >= m.CurrentSnapshotAgeSeconds && m.CurrentSnapshotAgeSeconds >= 0 && m.OldestSnapshotAgeSeconds < 600) {
				t.Errorf("ages oldest %v, current %v: want 0 <= current <= oldest < 600", m.OldestSnapshotAgeSeconds, m.CurrentSnapshotAgeSeconds)
			}
			var gotParts []string
			var files, bytes int64
			for _, p := range m.Partitions {
				gotParts = append(gotParts, p.Partition)
				files += p.FileCount
				bytes += p.TotalBytes
				if p.AvgFileBytes != p.TotalBytes/p.FileCount {
					t.Errorf("partition %q: avg %d, want %d", p.Partition, p.AvgFileBytes, p.TotalBytes/p.FileCount)
				}
			}
			if diff := cmp.Diff(tc.wantParts, gotParts); diff != "" {
				t.Errorf("partitions (-want +got):\n%s", diff)
			}
			if files != m.FileCount || bytes != m.TotalBytes {
				t.Errorf("partitions sum to %d files, %d bytes; table has %d, %d", files, bytes, m.FileCount, m.TotalBytes)
			}
		})
	}
}

func TestMetricsEmptyTable(t *testing.T) {
	t.Parallel()
	cat, err := catalogs.Open(t.Context(), catalogs.Spec{Warehouse: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if err := cat.CreateNamespace(t.Context(), table.Identifier{"m"}, nil); err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.CreateTable(t.Context(), table.Identifier{"m", "empty"}, bench.Schema(2, true, ""))
	if err != nil {
		t.Fatal(err)
	}
	m, err := maintain.Metrics(t.Context(), tbl)
	if err != nil {
		t.Fatal(err)
	}
	want := &maintain.TableMetrics{Partitions: []maintain.PartitionMetrics{}}
	if diff := cmp.Diff(want, m); diff != "" {
		t.Errorf("metrics of an empty table (-want +got):\n%s", diff)
	}
}

// TestMetricsCountsDeleteFiles deletes rows merge-on-read, which leaves the
// data files in place and adds a position delete file: the delete file is
// counted apart, and the data figures do not change.
func TestMetricsCountsDeleteFiles(t *testing.T) {
	t.Parallel()
	cfg := bench.GenerateConfig{Table: "m.mor", Rows: 400, Commits: 2, Seed: 4,
		Properties: map[string]string{table.WriteDeleteModeKey: table.WriteModeMergeOnRead}}
	tbl := generatedTable(t, nil, cfg)
	before, err := maintain.Metrics(t.Context(), tbl)
	if err != nil {
		t.Fatal(err)
	}
	tx := tbl.NewTransaction()
	if err := tx.Delete(t.Context(), iceberg.LessThan(iceberg.Reference("id"), int64(10)), nil); err != nil {
		t.Fatal(err)
	}
	if tbl, err = tx.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	after, err := maintain.Metrics(t.Context(), tbl)
	if err != nil {
		t.Fatal(err)
	}
	if after.DeleteFileCount < 1 {
		t.Errorf("delete files %d after a merge-on-read delete, want at least 1", after.DeleteFileCount)
	}
	// Ten ids deleted by position, in position delete files of the
	// partitions they fall in; none before.
	if before.Deletes != nil {
		t.Errorf("delete debt before any delete: %+v", before.Deletes)
	}
	d := after.Deletes
	if d == nil || d.PositionDeleteFiles != after.DeleteFileCount || d.DeletedRecords != 10 || d.DeleteBytes <= 0 ||
		d.EqualityDeleteFiles != 0 || d.DeletionVectors != 0 || d.DeletedFraction != 10.0/float64(after.TotalRecords) {
		t.Errorf("delete debt %+v, want %d position delete files deleting 10 of %d records", d, after.DeleteFileCount, after.TotalRecords)
	}
	var parts maintain.DeleteDebt
	for _, p := range after.Partitions {
		if p.Deletes != nil {
			parts.PositionDeleteFiles += p.Deletes.PositionDeleteFiles
			parts.DeletedRecords += p.Deletes.DeletedRecords
		}
	}
	if d != nil && (parts.PositionDeleteFiles != d.PositionDeleteFiles || parts.DeletedRecords != d.DeletedRecords) {
		t.Errorf("partitions' debt %+v does not add up to the table's %+v", parts, d)
	}
	if after.FileCount != before.FileCount || after.TotalRecords != before.TotalRecords || after.TotalBytes != before.TotalBytes {
		t.Errorf("data figures changed: before %+v, after %+v", before, after)
	}
	if after.SnapshotCount != before.SnapshotCount+1 || after.ManifestCount <= before.ManifestCount {
		t.Errorf("snapshots %d -> %d, manifests %d -> %d; want one more snapshot and a delete manifest",
			before.SnapshotCount, after.SnapshotCount, before.ManifestCount, after.ManifestCount)
	}
}
