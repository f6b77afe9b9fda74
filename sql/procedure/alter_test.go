package procedure_test

import (
	"testing"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/alter"
	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/delta/deltatest"
	"github.com/geocompact/geocompact/sql"
	"github.com/geocompact/geocompact/sql/procedure"
	format "github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/table/deltatable"
	"github.com/geocompact/geocompact/table/icebergtable"
	"github.com/geocompact/geocompact/table/layouts"
	"github.com/geocompact/geocompact/table/optval"
)

func loadTable(t *testing.T, cat catalog.Catalog, name string) *table.Table {
	t.Helper()
	tbl, err := catalogs.LoadTable(t.Context(), cat, name)
	require.NoError(t, err)
	return tbl
}

// TestAlterIceberg runs each ALTER TABLE form on an Iceberg table of the
// embedded catalog (SQLite) and reads back what the table records.
func TestAlterIceberg(t *testing.T) {
	cats, cat := warehouse(t, 3)
	res, err := run(t, `ALTER TABLE geo.t SET TBLPROPERTIES ('write.target-file-size-bytes' = '128MiB', 'owner' = 'gis');
		ALTER TABLE geocompact.geo.t WRITE ORDERED BY bbox_minx DESC, id`, cats, procedure.Options{})
	require.NoError(t, err)
	require.Len(t, res, 2)
	assert.Equal(t, sql.CommandAlter, res[0].Command)
	assert.Equal(t, "geo.t", res[1].Table, "the first part names the embedded catalog")
	assert.Equal(t, []any{"bbox_minx DESC NULLS LAST, id ASC NULLS FIRST", layouts.FromSortOrder, "bbox_minx DESC NULLS LAST, id ASC NULLS FIRST"}, res[1].Rows[0].Values)
	tbl := loadTable(t, cat, "geo.t")
	assert.Equal(t, "134217728", tbl.Properties()["write.target-file-size-bytes"], "sizes take units, stored in bytes")
	assert.Equal(t, "gis", tbl.Properties()["owner"])
	require.Equal(t, 2, tbl.SortOrder().Len())
	assert.Equal(t, table.SortDESC, tbl.SortOrder().Field(0).Direction)

	res, err = run(t, "ALTER TABLE geo.t WRITE ORDERED BY hilbert(bbox_minx, bbox_miny)", cats, procedure.Options{})
	require.NoError(t, err)
	assert.Equal(t, []any{"hilbert(bbox_minx, bbox_miny)", layouts.FromProperty, "unsorted"}, res[0].Rows[0].Values)
	tbl = loadTable(t, cat, "geo.t")
	assert.Equal(t, "hilbert(bbox_minx, bbox_miny)", tbl.Properties()[layouts.Prop])
	assert.True(t, tbl.SortOrder().IsUnsorted())

	res, err = run(t, "ALTER TABLE geo.t WRITE UNORDERED; ALTER TABLE geo.t UNSET TBLPROPERTIES ('owner')", cats, procedure.Options{})
	require.NoError(t, err)
	assert.Equal(t, []any{"none (binpack)", "-", "unsorted"}, res[0].Rows[0].Values)
	assert.Equal(t, []string{layouts.Prop}, res[0].Detail.(*alter.Result).Unset)
	tbl = loadTable(t, cat, "geo.t")
	assert.NotContains(t, tbl.Properties(), layouts.Prop)
	assert.NotContains(t, tbl.Properties(), "owner")

	_, err = run(t, "ALTER TABLE geo.t UNSET TBLPROPERTIES ('owner', 'gc.enabled')", cats, procedure.Options{})
	require.ErrorIs(t, err, procedure.ErrCall)
	assert.Contains(t, err.Error(), "no property gc.enabled, owner")
	assert.Contains(t, err.Error(), "IF EXISTS")
	_, err = run(t, "ALTER TABLE geo.t SET TBLPROPERTIES ('owner' = 'x'); ALTER TABLE geo.t UNSET TBLPROPERTIES ('owner')", cats, procedure.Options{})
	require.NoError(t, err, "a key an earlier statement set may be unset")
	_, err = run(t, "ALTER TABLE geo.t UNSET TBLPROPERTIES IF EXISTS ('owner')", cats, procedure.Options{})
	require.NoError(t, err)
}

// TestAlterIcebergRefusals: a script with a refused ALTER commits
// nothing, not even its valid statements, and --dry-run commits nothing.
func TestAlterIcebergRefusals(t *testing.T) {
	cats, cat := warehouse(t, 1)
	before := loadTable(t, cat, "geo.t").Metadata().LastUpdatedMillis()
	for _, tc := range []struct {
		script string
		is     error
		want   string
	}{
		{"ALTER TABLE geo.t SET TBLPROPERTIES ('write.target-file-size-bytes' = '12XB')", optval.ErrBad, "write.target-file-size-bytes"},
		{"ALTER TABLE geo.t SET TBLPROPERTIES ('write.target-file-size' = '1MiB')", optval.ErrBad, "did you mean write.target-file-size-bytes?"},
		{"ALTER TABLE geo.t WRITE ORDERED BY bbox_minx, tss", optval.ErrBad, `no column "tss"`},
		{"ALTER TABLE geo.t SET TBLPROPERTIES ('" + layouts.Prop + "' = 'hilbert(')", optval.ErrBad, layouts.Prop},
		{"ALTER TABLE geo.t WRITE UNORDERED;\nALTER TABLE geo.t SET TBLPROPERTIES ('gc.enabled' = 'true', 'write.target-file-size-bytes' = '0')", optval.ErrBad, "positive"},
		{"ALTER TABLE geo.nope WRITE UNORDERED", catalog.ErrNoSuchTable, "geo.nope"},
		{"ALTER TABLE lake.geo.t WRITE UNORDERED", catalog.ErrNoSuchTable, "lake.geo.t"},
		{"ALTER TABLE geo.t WRITE ORDERED BY hilbert(bbox_minx, bbox_miny); ALTER TABLE geo.t UNSET TBLPROPERTIES x", sql.ErrInvalid, "line 1, column"},
	} {
		_, err := run(t, tc.script, cats, procedure.Options{})
		require.ErrorIs(t, err, tc.is, tc.script)
		assert.Contains(t, err.Error(), tc.want, tc.script)
	}
	res, err := run(t, "ALTER TABLE geo.t WRITE ORDERED BY hilbert()", cats, procedure.Options{DryRun: true})
	require.NoError(t, err)
	assert.True(t, res[0].DryRun)
	assert.Contains(t, res[0].Skipped, "no dry run")
	assert.Equal(t, before, loadTable(t, cat, "geo.t").Metadata().LastUpdatedMillis(), "nothing was committed")
}

// TestAlterMatchesCLI: the statements and the alter command's requests
// leave two identical tables with the same properties and sort order.
func TestAlterMatchesCLI(t *testing.T) {
	cats, cat := warehouse(t, 1)
	_, err := bench.Generate(t.Context(), cat, bench.GenerateConfig{Table: "geo.u", Rows: 600, Commits: 1, Seed: 1})
	require.NoError(t, err)
	steps := []struct {
		sql string
		req alter.Request
	}{
		{"ALTER TABLE geo.u SET TBLPROPERTIES ('write.target-file-size-bytes' = '64MiB', 'commit.manifest.target-size-bytes' = '1GB', owner = 7)",
			alter.Request{Set: map[string]string{"write.target-file-size-bytes": "64MiB", "commit.manifest.target-size-bytes": "1GB", "owner": "7"}}},
		{"ALTER TABLE geo.u WRITE ORDERED BY ts DESC NULLS FIRST, device_id", alter.Request{SortOrder: "ts DESC NULLS FIRST, device_id"}},
		{"ALTER TABLE geo.u WRITE ORDERED BY hilbert()", alter.Request{Curve: "hilbert"}},
		{"ALTER TABLE geo.u WRITE ORDERED BY zorder(bbox_minx, bbox_maxy)", alter.Request{SortOrder: "zorder(bbox_minx, bbox_maxy)"}},
		{"ALTER TABLE geo.u WRITE UNORDERED", alter.Request{Unsorted: true}},
		{"ALTER TABLE geo.u UNSET TBLPROPERTIES IF EXISTS ('owner', 'nope')", alter.Request{Unset: []string{"owner", "nope"}}},
	}
	for _, s := range steps {
		_, err := run(t, s.sql, cats, procedure.Options{})
		require.NoError(t, err, s.sql)
		tbl, err := icebergtable.Open(t.Context(), cat, "geo.t")
		require.NoError(t, err)
		_, err = alter.Apply(t.Context(), tbl, s.req)
		require.NoError(t, err, s.sql)
		viaCLI, viaSQL := loadTable(t, cat, "geo.t"), loadTable(t, cat, "geo.u")
		assert.Equal(t, viaCLI.Properties(), viaSQL.Properties(), s.sql)
		assert.Equal(t, viaCLI.SortOrder().String(), viaSQL.SortOrder().String(), s.sql)
	}
}

// openDelta is the Delta table at dir, opened as the alter command opens
// it.
func openDelta(t *testing.T, dir string) format.Table {
	t.Helper()
	tbl, err := deltatable.OpenLocation(t.Context(), dir, format.ForWrite)
	require.NoError(t, err)
	return tbl
}

// TestAlterDelta runs ALTER TABLE on Delta tables: the result matches
// the alter command's Apply, and protocol properties, Iceberg's
// target size key and missing columns are refused before anything runs.
func TestAlterDelta(t *testing.T) {
	dirA, dirB := t.TempDir(), t.TempDir()
	a := deltatest.Fragmented(t, dirA, 3, 40, deltatest.Options{})
	b := deltatest.Fragmented(t, dirB, 3, 40, deltatest.Options{})
	script := "ALTER TABLE delta.`" + dirA + "` SET TBLPROPERTIES ('delta.targetFileSize' = '2MiB', 'team' = 'maps');\n" +
		"ALTER TABLE '" + dirA + "' WRITE ORDERED BY zorder(bbox_minx, bbox_miny)"
	res, err := run(t, script, procedure.Catalogs{}, procedure.Options{})
	require.NoError(t, err)
	require.Len(t, res, 2)
	assert.Equal(t, dirA, res[1].Location)
	assert.Equal(t, []any{"zorder(bbox_minx, bbox_miny)", layouts.FromProperty, int64(5)}, res[1].Rows[0].Values)
	_, err = alter.Apply(t.Context(), openDelta(t, dirB), alter.Request{Set: map[string]string{"delta.targetFileSize": "2MiB", "team": "maps"}})
	require.NoError(t, err)
	_, err = alter.Apply(t.Context(), openDelta(t, dirB), alter.Request{SortOrder: "zorder(bbox_minx, bbox_miny)"})
	require.NoError(t, err)
	assert.Equal(t, deltatest.Snapshot(t, b).Metadata.Configuration, deltatest.Snapshot(t, a).Metadata.Configuration)
	assert.Equal(t, "2097152", deltatest.Snapshot(t, a).Metadata.Configuration[delta.PropTargetFileSize])

	_, err = run(t, "ALTER TABLE delta.`"+dirA+"` WRITE UNORDERED", procedure.Catalogs{}, procedure.Options{})
	require.NoError(t, err)
	assert.NotContains(t, deltatest.Snapshot(t, a).Metadata.Configuration, layouts.Prop)

	v := deltatest.Snapshot(t, a).Version
	for _, tc := range []struct{ stmt, want string }{
		{"SET TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')", `needs the table feature "deletionVectors"`},
		{"SET TBLPROPERTIES ('write.target-file-size-bytes' = '1MiB')", "delta.targetFileSize"},
		{"WRITE ORDERED BY bbox_minx, nope", "its columns are"},
		{"UNSET TBLPROPERTIES ('delta.columnMapping.mode')", "columnMapping"},
	} {
		_, err := run(t, "ALTER TABLE delta.`"+dirA+"` WRITE ORDERED BY hilbert();\nALTER TABLE delta.`"+dirA+"` "+tc.stmt, procedure.Catalogs{}, procedure.Options{})
		require.ErrorIs(t, err, optval.ErrBad, tc.stmt)
		assert.Contains(t, err.Error(), tc.want, tc.stmt)
		assert.Contains(t, err.Error(), "statement 2", tc.stmt)
	}
	_, err = run(t, "ALTER TABLE delta.`"+dirA+"` UNSET TBLPROPERTIES ('nope')", procedure.Catalogs{}, procedure.Options{})
	require.ErrorIs(t, err, procedure.ErrCall)
	assert.Equal(t, v, deltatest.Snapshot(t, a).Version, "nothing was committed")
}
