package engine_test

import (
	"fmt"
	"testing"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/inspect"
	"github.com/geocompact/geocompact/internal/testing/testenv"
	"github.com/geocompact/geocompact/maintain"
	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/table/icebergtable"
)

// TestIntegrationGenerateInspectMetrics builds small fragmented v2 and v3
// tables with bench.Generate on every test catalog (embedded SQLite, and
// PostgreSQL when configured) and checks what Inspect and Metrics report
// against what was generated.
func TestIntegrationGenerateInspectMetrics(t *testing.T) {
	t.Parallel()
	const rows, commits = 2000, 10
	extent := spatial.Bound{MinX: -20, MinY: 30, MaxX: 40, MaxY: 60}
	tests := []struct {
		name        string
		cfg         bench.GenerateConfig
		wantParts   []string
		exactFiles  bool
		wantColumns string // where the bbox comes from, for messages
	}{
		{"v2", bench.GenerateConfig{FormatVersion: 2}, []string{""}, true, "bbox columns"},
		{"v3", bench.GenerateConfig{FormatVersion: 3}, []string{""}, true, "geometry bounds"},
		{"v2 by day", bench.GenerateConfig{FormatVersion: 2, PartitionBy: "day(ts)"}, []string{"ts_day=2026-01-01", "ts_day=2026-01-02", "ts_day=2026-01-03"}, false, "bbox columns"},
	}
	for _, c := range testenv.Catalogs(t) {
		t.Run(c.Backend, func(t *testing.T) {
			cat, _ := c.Open(t)
			for i, tc := range tests {
				t.Run(tc.name, func(t *testing.T) {
					cfg := tc.cfg
					cfg.Table = fmt.Sprintf("it.t%d", i)
					cfg.Rows, cfg.Commits, cfg.Extent, cfg.Seed = rows, commits, extent, uint64(100+i)
					res, err := bench.Generate(t.Context(), cat, cfg)
					if err != nil {
						t.Fatal(err)
					}
					tbl, err := catalogs.LoadTable(t.Context(), cat, cfg.Table)
					if err != nil {
						t.Fatal(err)
					}

					m, err := maintain.Metrics(t.Context(), tbl)
					if err != nil {
						t.Fatal(err)
					}
					if tc.exactFiles && m.FileCount != commits {
						t.Errorf("metrics: %d files, want one per commit (%d)", m.FileCount, commits)
					}
					if m.FileCount < commits || m.FileCount != int64(res.DataFiles) || m.TotalBytes != res.Bytes {
						t.Errorf("metrics: %d files, %d bytes; generate reported %d, %d", m.FileCount, m.TotalBytes, res.DataFiles, res.Bytes)
					}
					if m.TotalRecords != rows || m.SnapshotCount != commits || m.ManifestCount != commits || m.DeleteFileCount != 0 {
						t.Errorf("metrics: records %d, snapshots %d, manifests %d, delete files %d; want %d, %d, %d, 0",
							m.TotalRecords, m.SnapshotCount, m.ManifestCount, m.DeleteFileCount, rows, commits, commits)
					}
					var parts []string
					for _, p := range m.Partitions {
						parts = append(parts, p.Partition)
					}
					if fmt.Sprint(parts) != fmt.Sprint(tc.wantParts) {
						t.Errorf("metrics: partitions %q, want %q", parts, tc.wantParts)
					}

					it, err := icebergtable.Loaded(t.Context(), cat, cfg.Table, tbl)
					if err != nil {
						t.Fatal(err)
					}
					files, err := inspect.Rows(t.Context(), it.Describe(), inspect.Files)
					if err != nil {
						t.Fatal(err)
					}
					if int64(len(files)) != m.FileCount {
						t.Fatalf("inspect files: %d rows, metrics counts %d files", len(files), m.FileCount)
					}
					union := spatial.EmptyBound()
					var records int64
					for k, f := range files {
						n, _ := f.Get("record_count")
						records += n.(int64)
						v, _ := f.Get("bbox")
						b, ok := v.(spatial.Bound)
						if !ok {
							t.Fatalf("file %d has no bbox from its %s", k, tc.wantColumns)
						}
						if b.MinX < res.Extent.MinX || b.MinY < res.Extent.MinY || b.MaxX > res.Extent.MaxX || b.MaxY > res.Extent.MaxY {
							t.Errorf("file %d: bbox %v outside the generated extent %v", k, b, res.Extent)
						}
						union = union.Extend(b)
					}
					if union != res.Extent {
						t.Errorf("union of file bboxes %v, want the generated extent %v", union, res.Extent)
					}
					if records != rows {
						t.Errorf("inspect files: %d records, want %d", records, rows)
					}

					snaps, err := inspect.Rows(t.Context(), it.Describe(), inspect.Snapshots)
					if err != nil {
						t.Fatal(err)
					}
					if len(snaps) != commits {
						t.Errorf("inspect snapshots: %d rows, want %d", len(snaps), commits)
					}
					for _, s := range snaps {
						if op, _ := s.Get("operation"); op != "append" {
							t.Errorf("snapshot operation %v, want append", op)
						}
					}
				})
			}
		})
	}
}
