package maintain_test

import (
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/maintain"
	"github.com/geocompact/geocompact/table/catalogs"
)

// deletedTable generates a merge-on-read table, partitioned in two, and
// deletes n ranges of width rows from it, one commit each.
func deletedTable(t *testing.T, n int, width int64) catalog.Catalog {
	t.Helper()
	cat, err := catalogs.Open(t.Context(), catalogs.Spec{Warehouse: t.TempDir()})
	require.NoError(t, err)
	_, err = bench.Generate(t.Context(), cat, bench.GenerateConfig{Table: "d.t", Rows: 2000, Commits: 2, Seed: 9,
		PartitionBy: "bucket(2, device_id)", Properties: map[string]string{table.WriteDeleteModeKey: table.WriteModeMergeOnRead}})
	require.NoError(t, err)
	for i := range int64(n) {
		lo := i * 150
		_, err := load(t, cat, "d.t").Delete(t.Context(), iceberg.NewAnd(iceberg.GreaterThanEqual(iceberg.Reference("id"), lo),
			iceberg.LessThan(iceberg.Reference("id"), lo+width)), nil)
		require.NoError(t, err)
	}
	return cat
}

// quietPolicy is testPolicy with the size gate off, so only the deletes
// policy can make a run compact.
func quietPolicy() maintain.Policy {
	p := testPolicy()
	p.Gate.MinAvgFileBytes, p.Gate.MaxFilesPerPartition = -1, -1
	return p
}

func TestMaintainCompactsDeleteFiles(t *testing.T) {
	t.Parallel()
	cat := deletedTable(t, 6, 5)
	before, _ := liveRows(t, load(t, cat, "d.t"))
	p := quietPolicy()
	p.Deletes.MaxDeleteFiles = 5

	rep, err := maintain.Run(t.Context(), opened(t, cat, "d.t"), maintain.Config{Policy: p, DryRun: true})
	require.NoError(t, err)
	assert.Equal(t, maintain.StepWouldRun, stepStatus(rep)["deletes"], "%+v", rep.Steps)

	rep, err = maintain.Run(t.Context(), opened(t, cat, "d.t"), maintain.Config{Policy: p, Owner: "test"})
	require.NoError(t, err, "%+v", rep.Steps)
	st := stepStatus(rep)
	assert.Equal(t, maintain.StepSkipped, st["rewrite"], "deletes hide 1.5%% of the rows: no data rewrite")
	assert.Equal(t, maintain.StepDone, st["deletes"], "%+v", rep.Steps)
	require.NotNil(t, rep.Deletes)
	assert.Equal(t, 12, rep.Deletes.RewrittenDeleteFilesCount)
	assert.Equal(t, 2, rep.Deletes.AddedDeleteFilesCount)
	assert.Equal(t, int64(2), rep.After.Deletes.PositionDeleteFiles)
	after, _ := liveRows(t, load(t, cat, "d.t"))
	assert.Equal(t, before, after)

	rep, err = maintain.Run(t.Context(), opened(t, cat, "d.t"), maintain.Config{Policy: p, Owner: "test"})
	require.NoError(t, err)
	assert.Equal(t, maintain.StepSkipped, stepStatus(rep)["deletes"], "two files are under the threshold")
}

// TestMaintainRewritesDataWhenDeletesHideRows: deletes hiding more than
// rewrite-data-above of the rows fire the gate, and the rewrite applies
// them instead of the delete files being compacted.
func TestMaintainRewritesDataWhenDeletesHideRows(t *testing.T) {
	t.Parallel()
	cat := deletedTable(t, 6, 100)
	before, _ := liveRows(t, load(t, cat, "d.t"))
	rep, err := maintain.Run(t.Context(), opened(t, cat, "d.t"), maintain.Config{Policy: quietPolicy(), Owner: "test"})
	require.NoError(t, err, "%+v", rep.Steps)
	assert.Contains(t, rep.Gate.Fired, maintain.GateRewriteDataAbove)
	assert.Contains(t, rep.Gate.Reason, "deletes hide 30.0% of the rows")
	st := stepStatus(rep)
	assert.Equal(t, maintain.StepDone, st["rewrite"])
	assert.Equal(t, maintain.StepSkipped, st["deletes"], "the rewrite dropped the delete files")
	assert.Nil(t, rep.After.Deletes, "no delete debt is left")
	after, _ := liveRows(t, load(t, cat, "d.t"))
	assert.Equal(t, before-600, after, "the data files hold the rows left, and none deleted")
}

func TestDeletesPolicyRefusals(t *testing.T) {
	t.Parallel()
	for doc, want := range map[string]string{
		"deletes:\n  options:\n    min-input-file: 2\n": `deletes.options: engine: bad option: rewrite_position_delete_files: unknown option "min-input-file"`,
		"deletes:\n  rewrite-data-above: 1.5\n":         "deletes.rewrite-data-above 1.5",
		"deletes:\n  max-delete-file: 3\n":              "max-delete-file",
	} {
		_, err := maintain.ParsePolicy([]byte(doc), "policy.yaml")
		require.ErrorIs(t, err, maintain.ErrPolicy, doc)
		assert.Contains(t, err.Error(), want)
	}
}
