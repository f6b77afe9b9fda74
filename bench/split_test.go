package bench

import (
	"testing"

	"github.com/apache/iceberg-go/catalog"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/table/catalogs"
)

// splitProps make generated files of several row groups, each file
// larger than the read split target: iceberg-go plans every such file as
// several tasks, one per range of row groups (the ~1 GiB tables of the
// peer benchmark reach this with the 128 MiB default).
var splitProps = map[string]string{"write.parquet.row-group-limit": "200", "read.split.target-size": "4096"}

// generateSplit builds a day-partitioned table of rows rows whose files
// scan planning splits, and returns it with its distinct data files.
func generateSplit(t *testing.T, cat catalog.Catalog, name string, rows int64) (*GenerateResult, map[string]bool) {
	t.Helper()
	gen, err := Generate(t.Context(), cat, GenerateConfig{Table: name, Rows: rows, Commits: 2, Distribution: Clustered,
		PartitionBy: "day(ts)", Seed: 3, Properties: splitProps})
	require.NoError(t, err)
	tbl, err := catalogs.LoadTable(t.Context(), cat, name)
	require.NoError(t, err)
	tasks, err := tbl.Scan().PlanFiles(t.Context())
	require.NoError(t, err)
	files := map[string]bool{}
	for _, task := range tasks {
		files[task.File.FilePath()] = true
	}
	require.Greater(t, len(tasks), len(files), "the table's files must be planned as several tasks each")
	return gen, files
}

func TestSplitFilesCountOnce(t *testing.T) {
	cat := newCatalog(t)
	gen, files := generateSplit(t, cat, "b.split", 6000)
	require.Equal(t, len(files), gen.DataFiles, "generate's data file count")

	rep, err := Run(t.Context(), cat, Config{Table: "b.split", Layouts: []Layout{Current, "hilbert"},
		WindowConfig: WindowConfig{Count: 40, Seed: 1}, Options: map[string]string{"target-file-size-bytes": "60000"}})
	require.NoError(t, err, "a file planned as several tasks is one file, planned whole")
	require.Equal(t, len(files), rep.SourceFiles)
	for _, lr := range rep.Layouts {
		require.Equal(t, gen.Rows, lr.Rows, "layout %s", lr.Layout)
		for i, w := range lr.PerWindow {
			require.LessOrEqual(t, w.Planned, lr.Files, "layout %s window %d plans more files than it has", lr.Layout, i)
			require.GreaterOrEqual(t, w.Planned, w.FilesWithMatches, "layout %s window %d", lr.Layout, i)
		}
	}
	require.Equal(t, len(files), rep.Layouts[0].Files)
	hil := rep.Layouts[1]
	t.Logf("hilbert: %d files, %.2f planned per window", hil.Files, hil.MeanFilesPlanned)
	require.Less(t, hil.MeanFilesPlanned, float64(hil.Files), "sorted files: some window prunes a file")
}
