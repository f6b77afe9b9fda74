package catalogs

import (
	"context"

	"github.com/apache/iceberg-go/table"
)

// PlanFiles plans scan and returns one task per data file, each covering
// its whole file (see WholeFiles). Every caller here counts, selects,
// reads or replaces files, never byte ranges of them, so it plans through
// this rather than scan.PlanFiles.
func PlanFiles(ctx context.Context, scan *table.Scan) ([]table.FileScanTask, error) {
	tasks, err := scan.PlanFiles(ctx)
	if err != nil {
		return nil, err
	}
	return WholeFiles(tasks), nil
}

// WholeFiles joins the tasks scan planning split a data file into back
// into one task for the whole file, in the order of each file's first
// task. iceberg-go splits a Parquet file larger than the table's
// read.split.target-size (128 MiB by default) with several row groups
// into one task per range of row groups: taken as files, such a file is
// counted once per range, reading a task reads only its range's rows, and
// a file's ranges can be planned apart.
func WholeFiles(tasks []table.FileScanTask) []table.FileScanTask {
	out := make([]table.FileScanTask, 0, len(tasks))
	seen := make(map[string]bool, len(tasks))
	for _, t := range tasks {
		p := t.File.FilePath()
		if seen[p] {
			continue
		}
		seen[p] = true
		t.Start, t.Length = 0, t.File.FileSizeBytes()
		out = append(out, t)
	}
	return out
}
