package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/sql"
)

// sqlLines decodes --json output: one object per statement, one per line.
func sqlLines(t *testing.T, stdout string) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m), "line %q", sc.Text())
		out = append(out, m)
	}
	return out
}

func TestSQLCLI(t *testing.T) {
	wh := generated(t, 6)
	script := filepath.Join(t.TempDir(), "nightly.sql")
	writeFile(t, script, `-- compact, then look at what expiry would free
CALL geocompact.system.rewrite_data_files(
  table => 'geo.t',
  strategy => 'sort',
  sort_order => 'hilbert(bbox_minx, bbox_miny)', /* geocompact's own curve */
  options => map('min-input-files', '2'),
  where => 'device_id >= 0 OR device_id < 0'
);
CALL system.expire_snapshots(table => "geo.t", dry_run => true, stream_results => true);
`)
	r := runCLI(t, wh, false, "sql", "-f", script)
	require.Equal(t, exitOK, r.Code, "stderr %q", r.Stderr)
	for _, want := range []string{
		"statement 1 (line 2): geocompact.system.rewrite_data_files on geo.t\n",
		"rewritten_data_files_count  added_data_files_count  rewritten_bytes_count  failed_data_files_count  removed_delete_files_count\n6  ",
		"statement 2 (line 9): geocompact.system.expire_snapshots on geo.t (dry run)\n",
		"deleted_data_files_count  deleted_position_delete_files_count",
		"(1 row)",
	} {
		assert.Contains(t, r.Stdout, want)
	}
	assert.Contains(t, r.Stderr, "statement 2: stream_results: accepted and ignored")

	r = runCLI(t, wh, false, "--json", "sql", "CALL system.rewrite_manifests('geo.t'); CALL system.remove_orphan_files(table => 'geo.t', dry_run => true)")
	require.Equal(t, exitOK, r.Code, "stderr %q", r.Stderr)
	lines := sqlLines(t, r.Stdout)
	require.Len(t, lines, 2, "one object per statement")
	assert.Equal(t, "rewrite_manifests", lines[0]["procedure"])
	assert.Equal(t, []any{map[string]any{"rewritten_manifests_count": 2.0, "added_manifests_count": 1.0}}, lines[0]["rows"])
	assert.Equal(t, 2.0, lines[1]["statement"])
	assert.Equal(t, []any{"orphan_file_location"}, lines[1]["columns"])
	assert.Equal(t, []any{}, lines[1]["rows"])

	r = runCLI(t, wh, false, "--json", "inspect", "files", "--table", "geo.t")
	require.Equal(t, exitOK, r.Code, "stderr %q", r.Stderr)
	assert.Equal(t, 1, strings.Count(r.Stdout, ".parquet"), "the rewrite left one data file:\n%s", r.Stdout)
}

func TestSQLCLIRefusals(t *testing.T) {
	wh := generated(t, 2)
	cases := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"no statements", []string{"sql"}, exitUsage, []string{"-f FILE"}},
		{"argument and file", []string{"sql", "-f", "x.sql", "CALL system.rewrite_manifests('geo.t')"}, exitUsage, []string{"not both"}},
		{"parse error", []string{"sql", "CALL system.rewrite_manifests('geo.t');\nCALL system.rewrite_manifests('geo.t'"}, exitUsage, []string{"line 2, column 38", "end of input"}},
		{"unknown procedure", []string{"sql", "CALL system.rewrite_data_file('geo.t')"}, exitUsage, []string{"statement 1", "unknown procedure system.rewrite_data_file", "did you mean rewrite_data_files?"}},
		{"unknown argument", []string{"sql", "CALL system.expire_snapshots(table => 'geo.t', older_tan => TIMESTAMP '2026-01-01')"}, exitUsage, []string{"expire_snapshots has no argument older_tan", "did you mean older_than?"}},
		{"wrong type names procedure and argument", []string{"sql", "CALL system.expire_snapshots('geo.t', 5)"}, exitUsage, []string{"expire_snapshots: argument older_than: want a timestamp"}},
		{"unknown catalog", []string{"sql", "CALL lake.system.rewrite_manifests('geo.t')"}, exitUsage, []string{`catalog "lake" is not configured`}},
		{"bad where", []string{"sql", `CALL system.rewrite_data_files(table => 'geo.t', where => 'device = "x"')`}, exitUsage, []string{"argument where", "device"}},
		{"retention floor", []string{"sql", "CALL system.expire_snapshots('geo.t', TIMESTAMP '2020-01-01', 1); CALL system.remove_orphan_files(table => 'geo.t', older_than => '2999-01-01')"}, exitUsage, []string{"statement 2", "future"}},
		{"missing table", []string{"sql", "CALL system.rewrite_manifests('geo.nope')"}, exitUsage, []string{"statement 1 (line 1, rewrite_manifests)", "geo.nope"}},
		{"missing table after a good statement", []string{"sql", "CALL system.rewrite_manifests('geo.t'); CALL system.rewrite_data_files('geo.nope')"}, exitUsage, []string{"statement 2", "geo.nope"}},
		{"missing file", []string{"sql", "-f", "/nonexistent/x.sql"}, exitError, []string{"x.sql"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := runCLI(t, wh, false, tc.args...)
			assert.Equal(t, tc.code, r.Code, "stderr %q", r.Stderr)
			for _, w := range tc.want {
				assert.Contains(t, r.Stderr, w)
			}
			assert.Empty(t, r.Stdout, "nothing ran")
		})
	}
}

// TestSQLCLIStopsAtFailure checks that a statement failing as it runs
// stops the script with its index, after printing the ones before it.
func TestSQLCLIStopsAtFailure(t *testing.T) {
	t.Run("a long predicate is not echoed whole", func(t *testing.T) {
		wh := generated(t, 2)
		pred := strings.Repeat("id > 1 AND ", 20000) + "nope > 1"
		r := runCLI(t, wh, false, "sql", "CALL system.rewrite_data_files(table => 'geo.t', where => '"+pred+"')")
		assert.Equal(t, exitUsage, r.Code)
		assert.Contains(t, r.Stderr, `unknown column "nope"`)
		assert.Less(t, len(r.Stderr), 1000, "stderr %.300q", r.Stderr)
	})

	wh := generated(t, 3)
	r := runCLI(t, wh, false, "sql", "CALL system.rewrite_manifests('geo.t');\n"+
		"CALL system.remove_orphan_files(table => 'geo.t', location => '/');\n"+
		"CALL system.rewrite_data_files(table => 'geo.t', options => map('min-input-files', '2'))")
	assert.Equal(t, exitError, r.Code)
	assert.Contains(t, r.Stderr, "statement 2 (line 2, remove_orphan_files)")
	assert.Contains(t, r.Stdout, "statement 1 (line 1): geocompact.system.rewrite_manifests")
	assert.NotContains(t, r.Stdout, "statement 3")
}

// TestSQLCLICatalogs checks that catalog.system.proc resolves against the
// config file's catalogs and the embedded catalog's own name, and
// system.proc runs on the current catalog.
func TestSQLCLICatalogs(t *testing.T) {
	wh := generated(t, 4)
	lake := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "geocompact.yaml")
	writeFile(t, cfg, "catalogs:\n  lake:\n    type: sql\n    warehouse: "+lake+"\n    properties:\n      uri: file:"+filepath.Join(lake, "catalog.db")+"\n")
	r := runCLI(t, wh, false, "--config", cfg, "--catalog", "lake", "generate", "--table", "geo.t", "--rows", "300", "--commits", "3")
	require.Equal(t, exitOK, r.Code, "stderr %q", r.Stderr)

	opts := "options => map('min-input-files', '2')"
	r = runCLI(t, wh, false, "--config", cfg, "--json", "sql",
		"CALL lake.system.rewrite_data_files(table => 'geo.t', "+opts+"); CALL geocompact.system.rewrite_data_files(table => 'geo.t', "+opts+")")
	require.Equal(t, exitOK, r.Code, "stderr %q", r.Stderr)
	lines := sqlLines(t, r.Stdout)
	require.Len(t, lines, 2)
	assert.Equal(t, "lake", lines[0]["catalog"])
	assert.Equal(t, 3.0, lines[0]["rows"].([]any)[0].(map[string]any)["rewritten_data_files_count"])
	assert.Equal(t, "geocompact", lines[1]["catalog"])
	assert.Equal(t, 4.0, lines[1]["rows"].([]any)[0].(map[string]any)["rewritten_data_files_count"])

	r = runCLI(t, wh, false, "--config", cfg, "--catalog", "lake", "--json", "sql", "CALL system.rewrite_manifests('geo.t')")
	require.Equal(t, exitOK, r.Code, "stderr %q", r.Stderr)
	assert.Equal(t, "lake", sqlLines(t, r.Stdout)[0]["catalog"], "system.proc runs on --catalog")
}

func TestLargestMemoryBudget(t *testing.T) {
	calls := []sql.Call{
		{Procedure: sql.RewriteDataFiles, Options: map[string]string{"max-group-memory-bytes": "1GiB"}},
		{Procedure: sql.ExpireSnapshots},
		{Procedure: sql.RewriteDataFiles, Options: map[string]string{"max-group-memory-bytes": "3GiB", "min-input-files": "2"}},
		{Procedure: sql.RewriteDataFiles, Options: map[string]string{"min-input-files": "2"}},
	}
	o, err := largestMemoryBudget(calls).OptionsFor(nil)
	require.NoError(t, err)
	assert.Equal(t, int64(3<<30), o.MaxGroupMemoryBytes, "units as the engine reads them")
	assert.Equal(t, calls[2].Options, largestMemoryBudget(calls).Options)
	assert.Empty(t, largestMemoryBudget(calls[1:2]).Options, "no budget named: an empty request, the default")
}

// TestSQLCLIDelta runs Delta Lake's VACUUM through sql, with the vacuum
// command's floor and output, and OPTIMIZE as rewrite --delta runs it.
func TestSQLCLIDelta(t *testing.T) {
	dir := copyDeltaTable(t, "basic-with-inserts-deletes-checkpoint", 30*24*time.Hour)
	before := parquetNames(t, dir)
	rows := deltaRows(t, dir)

	r := runCLI(t, "", false, "sql", "VACUUM delta.`"+dir+"` RETAIN 1 HOURS")
	assert.Equal(t, exitUsage, r.Code)
	assert.Contains(t, r.Stderr, "statement 1 (line 1, VACUUM)")
	assert.Contains(t, r.Stderr, "below the table's delta.deletedFileRetentionDuration of 168 HOURS")
	assert.Contains(t, r.Stderr, "--force")
	assert.Equal(t, before, parquetNames(t, dir), "a refused vacuum deletes nothing")

	r = runCLI(t, "", false, "sql", "OPTIMIZE delta.`"+dir+"` WHERE idd > 1 HILBERT BY (id)")
	assert.Equal(t, exitUsage, r.Code)
	assert.Contains(t, r.Stderr, `unknown column "idd" (columns: id)`)
	assert.Empty(t, r.Stdout)

	r = runCLI(t, "", false, "sql", "VACUUM '"+dir+"' DRY RUN")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	assert.Contains(t, r.Stdout, "statement 1 (line 1): VACUUM on Delta table "+dir+" (dry run)\npath\n"+dir+"/part-")
	assert.Contains(t, r.Stdout, "dry run: 7 files")
	assert.Contains(t, r.Stdout, "(7 rows)")
	assert.Equal(t, before, parquetNames(t, dir), "a dry run deletes nothing")

	r = runCLI(t, "", false, "--json", "sql", "VACUUM delta.`"+dir+"`;\nVACUUM delta.`"+dir+"` RETAIN 0 HOURS")
	assert.Equal(t, exitUsage, r.Code, "RETAIN 0 HOURS without --force is refused before the first statement runs")
	assert.Equal(t, before, parquetNames(t, dir))

	r = runCLI(t, "", false, "--json", "sql", "--force", "VACUUM delta.`"+dir+"`;\nVACUUM delta.`"+dir+"` RETAIN 0 HOURS")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	lines := sqlLines(t, r.Stdout)
	require.Len(t, lines, 2)
	assert.Equal(t, "VACUUM", lines[0]["command"])
	assert.Equal(t, []any{map[string]any{"path": dir}}, lines[0]["rows"])
	assert.Equal(t, 7.0, lines[0]["detail"].(map[string]any)["deleted_files_count"])
	assert.Equal(t, 0.0, lines[1]["detail"].(map[string]any)["deleted_files_count"])
	assert.Len(t, parquetNames(t, dir), 7)
	assert.Equal(t, rows, deltaRows(t, dir))

	r = runCLI(t, "", false, "--json", "sql", "OPTIMIZE delta.`"+dir+"` ZORDER BY (id)")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	lines = sqlLines(t, r.Stdout)
	require.Len(t, lines, 1)
	assert.Equal(t, "OPTIMIZE", lines[0]["command"])
	row := lines[0]["rows"].([]any)[0].(map[string]any)
	assert.Equal(t, dir, row["path"])
	assert.Equal(t, 7.0, row["rewritten_data_files_count"])
	assert.Equal(t, 1.0, row["added_data_files_count"])
	assert.Equal(t, rows, deltaRows(t, dir))
}

// TestSQLCLIStatementText checks that the statement argument is never read
// as flags, even when it begins with a -- comment, with flags before or
// after it, and that statements come from standard input with "-" or a
// pipe.
func TestSQLCLIStatementText(t *testing.T) {
	wh := generated(t, 3)
	const stmt = "-- compact the small files\n CALL system.rewrite_data_files(table => 'geo.t', options => map('min-input-files', '2'))"
	for _, args := range [][]string{
		{"sql", stmt},
		{"sql", "--dry-run", stmt},
		{"sql", stmt, "--dry-run"},
		{"sql", "--dry-run", "--", stmt},
		{"sql", "--force", "-- just a comment --dry-run\nCALL system.rewrite_manifests('geo.t')"},
	} {
		r := runCLI(t, wh, false, args...)
		require.Equal(t, exitOK, r.Code, "%q: stderr %q", args, r.Stderr)
		assert.NotContains(t, r.Stderr, "flag", "%q", args)
		assert.Contains(t, r.Stdout, "statement 1", "%q", args)
	}
	r := runCLI(t, wh, false, "sql", stmt, "--dry-run")
	assert.Contains(t, r.Stdout, "(dry run)", "a flag after the text still counts")

	for name, tc := range map[string]struct {
		args  []string
		piped bool
	}{
		"dash":         {[]string{"sql", "--dry-run", "-"}, false},
		"dash file":    {[]string{"sql", "--dry-run", "-f", "-"}, false},
		"pipe":         {[]string{"sql", "--dry-run"}, true},
		"pipe as json": {[]string{"--json", "sql", "--dry-run"}, true},
	} {
		t.Run(name, func(t *testing.T) {
			r := runCLIStdin(t, wh, stmt+";\n", tc.piped, tc.args...)
			require.Equal(t, exitOK, r.Code, "stderr %q", r.Stderr)
			assert.Contains(t, r.Stdout, "rewrite_data_files")
		})
	}
	r = runCLIStdin(t, wh, "  \n", true, "sql")
	assert.Equal(t, exitUsage, r.Code)
	assert.Contains(t, r.Stderr, "no statements in standard input")
}

// runCLIStdin runs the command line as runCLI does, with stdin holding in
// (a pipe when piped is set).
func runCLIStdin(t testing.TB, warehouse, in string, piped bool, args ...string) cliResult {
	t.Helper()
	var out, errOut bytes.Buffer
	ios := &ioStreams{In: strings.NewReader(in), Out: &out, ErrOut: &errOut, InPiped: piped}
	full := append([]string{"--warehouse", warehouse, "--config", noConfig(t)}, args...)
	code := run(t.Context(), full, ios)
	return cliResult{Code: code, Stdout: out.String(), Stderr: errOut.String()}
}
