package icebergtable_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/table/icebergtable"
)

// A data file larger than the table's read.split.target-size with several
// row groups is planned by iceberg-go as one task per range of row
// groups. A rewrite plans on files: each is listed once with all its rows,
// and replacing it reads and removes it whole.
func TestRewritePlansSplitFilesWhole(t *testing.T) {
	ctx := t.Context()
	cat, err := catalogs.Open(ctx, catalogs.Spec{Warehouse: t.TempDir()})
	require.NoError(t, err)
	gen, err := bench.Generate(ctx, cat, bench.GenerateConfig{Table: "s.split", Rows: 6000, Commits: 2,
		Distribution: bench.Clustered, PartitionBy: "day(ts)", Seed: 3,
		Properties: map[string]string{"write.parquet.row-group-limit": "200", "read.split.target-size": "4096"}})
	require.NoError(t, err)
	tbl, err := catalogs.LoadTable(ctx, cat, "s.split")
	require.NoError(t, err)
	tasks, err := tbl.Scan().PlanFiles(ctx)
	require.NoError(t, err)
	paths := map[string]bool{}
	for _, task := range tasks {
		paths[task.File.FilePath()] = true
	}
	require.Greater(t, len(tasks), len(paths), "the table's files must be planned as several tasks each")

	d, err := icebergtable.Open(ctx, cat, "s.split")
	require.NoError(t, err)
	require.Equal(t, len(paths), len(d.Files), "one plan file per data file")
	var rows int64
	for _, f := range d.Files {
		rows += f.Records
	}
	require.Equal(t, gen.Rows, rows)

	res, err := engine.Rewrite(ctx, d, engine.Request{Strategy: engine.Sort, Curve: "hilbert", AllowLayoutChange: true,
		Options: map[string]string{engine.OptRewriteAll: "true", engine.OptTargetFileSize: "60000"}})
	require.NoError(t, err)
	require.Equal(t, len(paths), res.RewrittenDataFilesCount)

	after, err := icebergtable.Open(ctx, cat, "s.split")
	require.NoError(t, err)
	rows = 0
	for _, f := range after.Files {
		require.False(t, paths[f.Path], "replaced file %s is still live", f.Path)
		rows += f.Records
	}
	require.Equal(t, gen.Rows, rows)
}
