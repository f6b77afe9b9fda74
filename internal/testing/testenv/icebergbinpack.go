package testenv

import (
	"context"
	"fmt"

	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/compaction"
)

// IcebergBinpack compacts tbl the way iceberg-go's own CLI does — its
// planner, then Table.RewriteDataFiles — into files of target bytes,
// every file rewritten (as rewrite-all does for geocompact's): the
// baseline geocompact's rewrite benchmarks compare against.
func IcebergBinpack(ctx context.Context, tbl *table.Table, target int64) error {
	cfg := compaction.DefaultConfig()
	cfg.TargetFileSizeBytes, cfg.MinFileSizeBytes, cfg.MaxFileSizeBytes = target, target*3/4, target*9/5
	cfg.MinInputFiles = 1
	plan, err := compaction.Analyze(ctx, tbl, cfg)
	if err != nil {
		return err
	}
	if n := len(plan.Groups); n == 0 || plan.SkippedFiles > 0 {
		return fmt.Errorf("iceberg-go planned %d groups and skipped %d files; the comparison needs every file rewritten", n, plan.SkippedFiles)
	}
	groups := make([]table.CompactionTaskGroup, len(plan.Groups))
	for i, g := range plan.Groups {
		groups[i] = table.CompactionTaskGroup{PartitionKey: g.PartitionKey, Tasks: g.Tasks, TotalSizeBytes: g.TotalSizeBytes}
	}
	opts := table.RewriteDataFilesOptions{GroupOptions: []table.CompactionGroupOption{table.WithCompactionTargetFileSize(target)}}
	_, err = tbl.RewriteDataFiles(ctx, groups, opts)
	return err
}
