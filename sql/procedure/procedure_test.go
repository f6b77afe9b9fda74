package procedure_test

import (
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/maintain"
	"github.com/geocompact/geocompact/sql"
	"github.com/geocompact/geocompact/sql/procedure"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/table/config"
	"github.com/geocompact/geocompact/table/optval"
	"github.com/geocompact/geocompact/table/where"
)

// warehouse generates geo.t, a fragmented table of commits appends, in a
// fresh embedded catalog and returns the catalogs resolving to it.
func warehouse(t *testing.T, commits int) (procedure.Catalogs, catalog.Catalog) {
	t.Helper()
	cats := procedure.Catalogs{Warehouse: t.TempDir()}
	cat, err := catalogs.Open(t.Context(), catalogs.Spec{Warehouse: cats.Warehouse})
	require.NoError(t, err)
	_, err = bench.Generate(t.Context(), cat, bench.GenerateConfig{Table: "geo.t", Rows: 600, Commits: commits, Seed: 1})
	require.NoError(t, err)
	return cats, cat
}

// run prepares and runs script and returns the results of the statements
// that ran.
func run(t *testing.T, script string, cats procedure.Catalogs, opts procedure.Options) ([]*procedure.Result, error) {
	t.Helper()
	s, err := procedure.Prepare(t.Context(), script, cats, opts)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	var out []*procedure.Result
	err = s.Run(t.Context(), func(r *procedure.Result) error { out = append(out, r); return nil })
	return out, err
}

// content is the table's data file count and its ids, sorted.
func content(t *testing.T, cat catalog.Catalog) (files int, ids []int64) {
	t.Helper()
	tbl, err := catalogs.LoadTable(t.Context(), cat, "geo.t")
	require.NoError(t, err)
	tasks, err := tbl.Scan().PlanFiles(t.Context())
	require.NoError(t, err)
	_, batches, err := tbl.Scan(table.WithSelectedFields("id")).ToArrowRecords(t.Context())
	require.NoError(t, err)
	for b, err := range batches {
		require.NoError(t, err)
		ids = append(ids, b.Column(0).(*array.Int64).Int64Values()...)
		b.Release()
	}
	slices.Sort(ids)
	return len(tasks), ids
}

// row returns the values of row i of r by column name.
func row(t *testing.T, r *procedure.Result, i int) map[string]any {
	t.Helper()
	require.Greater(t, len(r.Rows), i, "result rows")
	out := map[string]any{}
	for j, c := range r.Columns {
		out[c] = r.Rows[i].Values[j]
	}
	return out
}

func TestRewriteDataFiles(t *testing.T) {
	cats, cat := warehouse(t, 6)
	filesBefore, idsBefore := content(t, cat)
	require.Equal(t, 6, filesBefore)

	script := `-- plan only
CALL geocompact.system.rewrite_data_files(table => 'geo.t', strategy => 'sort', sort_order => 'hilbert()', options => map('min-input-files', 2));`
	res, err := run(t, script, cats, procedure.Options{DryRun: true})
	require.NoError(t, err)
	require.Len(t, res, 1)
	assert.True(t, res[0].DryRun)
	dry := row(t, res[0], 0)
	assert.Equal(t, int64(6), dry["rewritten_data_files_count"], "a dry run reports what a real run would rewrite")
	files, ids := content(t, cat)
	assert.Equal(t, filesBefore, files, "a dry run writes nothing")
	assert.Equal(t, idsBefore, ids)

	// Spark's literal rules: a double-quoted literal in where is a string.
	res, err = run(t, `CALL system.rewrite_data_files(table => 'geo.t', options => map('min-input-files', 2), where => 'ts < "2000-01-01 00:00:00"')`, cats, procedure.Options{})
	require.NoError(t, err)
	require.Len(t, res, 1)
	assert.Contains(t, res[0].NoopReason, "no data file may hold rows matching")
	assert.Equal(t, int64(0), row(t, res[0], 0)["rewritten_data_files_count"])

	res, err = run(t, `CALL system.rewrite_data_files('geo.t', 'sort', 'zorder(bbox_minx, bbox_miny)', map("min-input-files", "2"), 'id >= 0 AND device_id <> -1')`, cats, procedure.Options{})
	require.NoError(t, err)
	require.Len(t, res, 1)
	r := res[0]
	assert.Equal(t, []string{"rewritten_data_files_count", "added_data_files_count", "rewritten_bytes_count",
		"failed_data_files_count", "removed_delete_files_count"}, r.Columns)
	assert.Equal(t, catalogs.EmbeddedName, r.Catalog)
	assert.Equal(t, "geo.t", r.Table)
	assert.False(t, r.DryRun)
	got := row(t, r, 0)
	assert.Equal(t, int64(6), got["rewritten_data_files_count"])
	assert.Equal(t, int64(1), got["added_data_files_count"])
	assert.Positive(t, got["rewritten_bytes_count"])
	assert.Equal(t, int64(0), got["failed_data_files_count"])
	detail, ok := r.Detail.(*engine.Result)
	require.True(t, ok)
	assert.Equal(t, "sort", detail.Strategy)
	assert.Contains(t, detail.SortOrder, "zorder")

	files, ids = content(t, cat)
	assert.Equal(t, 1, files, "compacted into one file")
	assert.Equal(t, idsBefore, ids, "the same rows")
}

func TestExpireAndOrphans(t *testing.T) {
	cats, cat := warehouse(t, 4)
	_, idsBefore := content(t, cat)
	tbl, err := catalogs.LoadTable(t.Context(), cat, "geo.t")
	require.NoError(t, err)
	u, err := url.Parse(tbl.Location())
	require.NoError(t, err)
	orphan := filepath.Join(u.Path, "data", "orphan.parquet")
	require.NoError(t, os.WriteFile(orphan, []byte("not referenced"), 0o644))
	old := time.Now().Add(-5 * 24 * time.Hour)
	require.NoError(t, os.Chtimes(orphan, old, old))

	time.Sleep(5 * time.Millisecond)
	now := time.Now().UTC() // after every append, before the rewrite
	script := `CALL system.rewrite_data_files(table => 'geo.t', options => map('min-input-files', '2'));
	CALL system.expire_snapshots(table => 'geo.t', older_than => TIMESTAMP '` + now.Format("2006-01-02 15:04:05.000000") + `', retain_last => 1, max_concurrent_deletes => 4, dry_run => true);
	CALL system.remove_orphan_files(table => 'geo.t', dry_run => true);`
	res, err := run(t, script, cats, procedure.Options{Force: true})
	require.NoError(t, err)
	require.Len(t, res, 3)

	exp := res[1]
	assert.Equal(t, 2, exp.Statement)
	assert.True(t, exp.DryRun)
	assert.Equal(t, []string{"deleted_data_files_count", "deleted_position_delete_files_count", "deleted_equality_delete_files_count",
		"deleted_manifest_files_count", "deleted_manifest_lists_count", "deleted_statistics_files_count"}, exp.Columns)
	got := row(t, exp, 0)
	assert.Equal(t, int64(4), got["deleted_data_files_count"], "the four appended files are only in expired snapshots")
	assert.Equal(t, int64(4), got["deleted_manifest_lists_count"])
	assert.Equal(t, int64(0), got["deleted_position_delete_files_count"])
	assert.Len(t, exp.Ignored, 1, "max_concurrent_deletes is accepted and ignored")

	orph := res[2]
	assert.Equal(t, []string{"orphan_file_location"}, orph.Columns)
	require.Len(t, orph.Rows, 1)
	assert.Contains(t, orph.Rows[0].Values[0], "orphan.parquet")
	assert.FileExists(t, orphan, "dry_run deletes nothing")

	script = `CALL system.expire_snapshots('geo.t', TIMESTAMP '` + now.Format(time.RFC3339Nano) + `', 1);
	CALL system.remove_orphan_files('geo.t')`
	res, err = run(t, script, cats, procedure.Options{Force: true})
	require.NoError(t, err)
	require.Len(t, res, 2)
	assert.Equal(t, int64(4), row(t, res[0], 0)["deleted_data_files_count"])
	require.Len(t, res[1].Rows, 1)
	assert.NoFileExists(t, orphan)
	tbl, err = catalogs.LoadTable(t.Context(), cat, "geo.t")
	require.NoError(t, err)
	assert.Len(t, tbl.Metadata().Snapshots(), 1, "only the rewrite's snapshot is left")
	_, ids := content(t, cat)
	assert.Equal(t, idsBefore, ids)
}

func TestRewriteManifests(t *testing.T) {
	cats, cat := warehouse(t, 5)
	_, idsBefore := content(t, cat)
	res, err := run(t, "CALL system.rewrite_manifests(table => 'geo.t', use_caching => true)", cats, procedure.Options{DryRun: true})
	require.NoError(t, err)
	require.Len(t, res, 1)
	assert.NotEmpty(t, res[0].Skipped, "rewrite_manifests has no dry run")
	assert.Empty(t, res[0].Rows)

	res, err = run(t, "CALL system.rewrite_manifests('geo.t')", cats, procedure.Options{})
	require.NoError(t, err)
	require.Len(t, res, 1)
	assert.Equal(t, []string{"rewritten_manifests_count", "added_manifests_count"}, res[0].Columns)
	got := row(t, res[0], 0)
	assert.Equal(t, int64(5), got["rewritten_manifests_count"])
	assert.Equal(t, int64(1), got["added_manifests_count"])
	_, ids := content(t, cat)
	assert.Equal(t, idsBefore, ids)
}

// TestRefusedBeforeAnythingRuns checks that a script with a bad statement
// anywhere runs none of its statements.
func TestRefusedBeforeAnythingRuns(t *testing.T) {
	cats, cat := warehouse(t, 3)
	cases := []struct {
		name, last string
		is         error
		want       []string
	}{
		{"parse error", "CALL system.rewrite_data_files('geo.t'", sql.ErrInvalid, []string{"line 2"}},
		{"unknown procedure", "CALL system.expire_snapshot('geo.t')", sql.ErrInvalid, []string{"statement 2", "did you mean expire_snapshots?"}},
		{"unknown catalog", "CALL geocompat.system.rewrite_manifests('geo.t')", procedure.ErrCall, []string{"statement 2", `catalog "geocompat"`, "did you mean geocompact?"}},
		{"missing table", "CALL system.rewrite_manifests('geo.nope')", nil, []string{"statement 2 (line 2, rewrite_manifests)", "geo.nope"}},
		{"unknown column in where", `CALL system.rewrite_data_files(table => 'geo.t', where => 'devic_id = 1')`, where.ErrInvalid, []string{"argument where", "devic_id"}},
		{"unknown option", "CALL system.rewrite_data_files(table => 'geo.t', options => map('min-input-file', '2'))", optval.ErrBad, []string{"argument options", "min-input-files"}},
		{"older_than in the future", "CALL system.expire_snapshots('geo.t', TIMESTAMP '2999-01-01')", procedure.ErrCall, []string{"older_than", "future"}},
		{"below the retention floor", "CALL system.remove_orphan_files('geo.t', TIMESTAMP '" + time.Now().UTC().Format(time.DateTime) + "')", maintain.ErrRetentionFloor, []string{"retention floor"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			script := "CALL system.rewrite_data_files(table => 'geo.t', options => map('min-input-files', '2'));\n" + tc.last
			_, err := run(t, script, cats, procedure.Options{})
			require.Error(t, err)
			if tc.is != nil {
				assert.ErrorIs(t, err, tc.is)
			}
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
			files, _ := content(t, cat)
			assert.Equal(t, 3, files, "the first statement did not run")
		})
	}
}

// TestFailureStopsTheScript checks that a statement failing as it runs
// stops the script, named by its index, after the statements before it.
func TestFailureStopsTheScript(t *testing.T) {
	cats, cat := warehouse(t, 3)
	script := `CALL system.rewrite_manifests('geo.t');
CALL system.remove_orphan_files(table => 'geo.t', location => '/');
CALL system.rewrite_data_files(table => 'geo.t', options => map('min-input-files', '2'))`
	res, err := run(t, script, cats, procedure.Options{})
	require.Error(t, err)
	se, ok := errors.AsType[*procedure.StatementError](err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, 2, se.Statement)
	assert.Equal(t, 2, se.Line)
	assert.Contains(t, err.Error(), "outside the table location")
	require.Len(t, res, 1, "the first statement ran")
	files, _ := content(t, cat)
	assert.Equal(t, 3, files, "the third did not")
}

func TestCatalogs(t *testing.T) {
	cfg, err := config.Parse([]byte("default-catalog: lake\ncommit-retries: 7\ncatalogs:\n  lake:\n    type: sql\n    properties:\n      uri: file:x.db\n  Other:\n    type: rest\n"), "test.yaml")
	require.NoError(t, err)
	cats := procedure.Catalogs{Config: cfg, Warehouse: "/wh"}
	spec, err := cats.Spec("")
	require.NoError(t, err)
	assert.Equal(t, "lake", spec.Name, "the config's default is current")
	spec, err = cats.Spec("other")
	require.NoError(t, err)
	assert.Equal(t, "Other", spec.Name)
	spec, err = cats.Spec("GeoCompact")
	require.NoError(t, err)
	assert.Equal(t, catalogs.Spec{Warehouse: "/wh", CommitRetries: 7}, spec, "the embedded catalog answers to its own name")
	_, err = cats.Spec("lak")
	require.ErrorIs(t, err, procedure.ErrCall)
	assert.Contains(t, err.Error(), "did you mean lake?")
	assert.Contains(t, err.Error(), "geocompact, Other, lake")

	cats.Current = "Other"
	spec, err = cats.Spec("")
	require.NoError(t, err)
	assert.Equal(t, "Other", spec.Name)
}

func TestResultJSON(t *testing.T) {
	cats, _ := warehouse(t, 2)
	res, err := run(t, "CALL system.rewrite_manifests('geo.t')", cats, procedure.Options{})
	require.NoError(t, err)
	b, err := json.Marshal(res[0])
	require.NoError(t, err)
	assert.Contains(t, string(b), `"rows":[{"rewritten_manifests_count":2,"added_manifests_count":1}]`)
	assert.Contains(t, string(b), `"statement":1,"line":1,"catalog":"geocompact","procedure":"rewrite_manifests","table":"geo.t"`)
}
