package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/validate/validatetest"
)

// writeGeoParquet writes a small GeoParquet file into dir and returns its
// path.
func writeGeoParquet(t testing.TB, dir, name string, f validatetest.File) string {
	t.Helper()
	p := filepath.Join(dir, name+".parquet")
	validatetest.Write(t, p, f)
	return p
}

func ingestLoadTable(t testing.TB, warehouse, name string) *table.Table {
	t.Helper()
	cat, err := catalogs.Open(t.Context(), catalogs.Spec{Warehouse: warehouse})
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := catalogs.LoadTable(t.Context(), cat, name)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// tableFiles lists every file under the table's location.
func ingestTableFiles(t testing.TB, tbl *table.Table) []string {
	t.Helper()
	root := strings.TrimPrefix(tbl.Location(), "file://")
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func ingestTableRows(t testing.TB, tbl *table.Table) int64 {
	t.Helper()
	tasks, err := tbl.Scan().PlanFiles(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, task := range tasks {
		n += task.File.Count()
	}
	return n
}

func TestIngestCreateAppendAndRefuse(t *testing.T) {
	wh, dir := t.TempDir(), t.TempDir()
	good1 := writeGeoParquet(t, dir, "good1", validatetest.File{Rows: validatetest.Points(20), Geo: validatetest.Geo(""), Extra: true})
	good2 := writeGeoParquet(t, dir, "good2", validatetest.File{Rows: validatetest.Points(7), Geo: validatetest.Geo(`"OGC:CRS84"`), Extra: true})

	r := runCLI(t, wh, false, "ingest", "--table", "gis.pts", "--create", good1)
	if r.Code != exitOK {
		t.Fatalf("create: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	tbl := ingestLoadTable(t, wh, "gis.pts")
	props := tbl.Properties()
	for k, want := range map[string]string{
		spatial.PropGeometryColumn: "geometry", spatial.PropGeometryEncoding: spatial.EncodingWKB,
		spatial.PropCRS: "OGC:CRS84", "write.metadata.metrics.column.geometry": "none",
	} {
		if props[k] != want {
			t.Errorf("property %s = %q, want %q", k, props[k], want)
		}
	}
	if v := tbl.Metadata().Version(); v != 2 {
		t.Errorf("format version %d, want 2", v)
	}
	if got := ingestTableRows(t, tbl); got != 20 {
		t.Fatalf("rows after create %d, want 20", got)
	}
	snap := tbl.CurrentSnapshot().SnapshotID
	files := ingestTableFiles(t, tbl)

	// One bad file among good ones refuses the whole batch.
	bad := writeGeoParquet(t, dir, "bad", validatetest.File{Rows: append(validatetest.Points(3), validatetest.Row{WKB: validatetest.Point(1, 1), BBox: validatetest.Box(9, 9, 9, 9)}), Geo: validatetest.Geo(""), Extra: true})
	r = runCLI(t, wh, false, "ingest", "--table", "gis.pts", good2, bad, good1)
	if r.Code != exitViolation {
		t.Fatalf("bad batch: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if !strings.Contains(r.Stdout, "bbox.mismatch") || !strings.Contains(r.Stderr, "nothing was written") {
		t.Errorf("refusal does not explain itself:\n%s\n%s", r.Stdout, r.Stderr)
	}
	tbl = ingestLoadTable(t, wh, "gis.pts")
	if got := tbl.CurrentSnapshot().SnapshotID; got != snap {
		t.Errorf("snapshot moved from %d to %d", snap, got)
	}
	if diff := slices.Compare(files, ingestTableFiles(t, tbl)); diff != 0 {
		t.Errorf("files under the table changed:\nbefore %v\nafter  %v", files, ingestTableFiles(t, tbl))
	}

	// The good files alone go in as one commit (good1 is in the table
	// already: --allow-duplicates appends it again).
	r = runCLI(t, wh, false, "--json", "ingest", "--table", "gis.pts", "--allow-duplicates", good2, good1)
	if r.Code != exitOK {
		t.Fatalf("append: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	var res icebergIngestJSON
	if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil {
		t.Fatal(err)
	}
	tbl = ingestLoadTable(t, wh, "gis.pts")
	if res.Rows != 27 || res.Files != 2 || res.Created || res.SnapshotID != tbl.CurrentSnapshot().SnapshotID {
		t.Errorf("result %+v", res)
	}
	if got := ingestTableRows(t, tbl); got != 47 {
		t.Errorf("rows %d, want 47", got)
	}
	if n := len(tbl.Metadata().Snapshots()); n != 2 {
		t.Errorf("%d snapshots, want 2 (one per ingest)", n)
	}

	// The table validates clean.
	r = runCLI(t, wh, false, "validate", "--table", "gis.pts")
	if r.Code != exitOK || !strings.Contains(r.Stdout, "gis.pts: 47 rows, ok") {
		t.Errorf("validate --table: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
}

func TestIngestRefusals(t *testing.T) {
	wh, dir := t.TempDir(), t.TempDir()
	good := writeGeoParquet(t, dir, "good", validatetest.File{Rows: validatetest.Points(5), Geo: validatetest.Geo(""), Extra: true})
	if r := runCLI(t, wh, false, "ingest", "--table", "gis.t", "--create", good); r.Code != exitOK {
		t.Fatalf("create: %d %s", r.Code, r.Stderr)
	}
	mercator := writeGeoParquet(t, dir, "mercator", validatetest.File{Rows: validatetest.Points(5), Geo: validatetest.Geo(`"EPSG:3857"`), Extra: true})
	extra := writeGeoParquet(t, dir, "extra", validatetest.File{Rows: validatetest.Points(5), Geo: validatetest.Geo(""), Extra: true, Covering: true})
	nobbox := writeGeoParquet(t, dir, "nobbox", validatetest.File{Rows: validatetest.Points(5), Geo: validatetest.Geo(""), Extra: true, NoBBox: true})
	tests := []struct {
		name string
		args []string
		code int
		want []string // in stdout+stderr
	}{
		{"missing table", []string{"--table", "gis.nope", good}, exitError, []string{"gis.nope", "does not exist"}},
		{"CRS drift names both", []string{"--table", "gis.t", mercator}, exitViolation, []string{"crs.mismatch", "EPSG:3857", "OGC:CRS84"}},
		{"schema misfit names the column", []string{"--table", "gis.t", "--add-bbox", extra}, exitError, []string{`"bbox"`, "nothing was written"}},
		{"bbox columns missing", []string{"--table", "gis.t", nobbox}, exitViolation, []string{"bbox.missing"}},
		{"corrupt file", []string{"--table", "gis.t", good, fixture("bad-file.corrupt_empty")}, exitViolation, []string{"file.corrupt"}},
	}
	tbl := ingestLoadTable(t, wh, "gis.t")
	snap, files := tbl.CurrentSnapshot().SnapshotID, ingestTableFiles(t, tbl)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runCLI(t, wh, false, append([]string{"ingest"}, tc.args...)...)
			if r.Code != tc.code {
				t.Fatalf("exit %d, want %d\n%s\n%s", r.Code, tc.code, r.Stdout, r.Stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.Stdout+r.Stderr, w) {
					t.Errorf("output lacks %q:\n%s\n%s", w, r.Stdout, r.Stderr)
				}
			}
			tbl := ingestLoadTable(t, wh, "gis.t")
			if tbl.CurrentSnapshot().SnapshotID != snap || slices.Compare(files, ingestTableFiles(t, tbl)) != 0 {
				t.Errorf("table changed")
			}
		})
	}
	// --add-bbox fills the missing columns from the WKB.
	if r := runCLI(t, wh, false, "ingest", "--table", "gis.t", "--add-bbox", nobbox); r.Code != exitOK {
		t.Fatalf("--add-bbox: %d %s %s", r.Code, r.Stdout, r.Stderr)
	}
	if r := runCLI(t, wh, false, "validate", "--table", "gis.t"); r.Code != exitOK {
		t.Fatalf("validate after --add-bbox: %d %s %s", r.Code, r.Stdout, r.Stderr)
	}
}

func TestIngestCreateV3(t *testing.T) {
	wh, dir := t.TempDir(), t.TempDir()
	src := writeGeoParquet(t, dir, "merc", validatetest.File{Rows: validatetest.Points(10), Geo: validatetest.Geo(`{"id":{"authority":"EPSG","code":3857}}`), Extra: true, NoBBox: true})
	r := runCLI(t, wh, false, "ingest", "--table", "gis.v3", "--create", "--format-version", "3", "--partition-by", "bucket(4, id)", src)
	if r.Code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	tbl := ingestLoadTable(t, wh, "gis.v3")
	f, ok := tbl.Schema().FindFieldByName("geometry")
	if !ok {
		t.Fatal("no geometry field")
	}
	gt, ok := f.Type.(iceberg.GeometryType)
	if !ok || gt.CRS() != "EPSG:3857" {
		t.Fatalf("geometry field type %v", f.Type)
	}
	if p := tbl.Properties(); p[spatial.PropGeometryEncoding] != spatial.EncodingIcebergGeometry || p[spatial.PropCRS] != "EPSG:3857" {
		t.Errorf("properties %v", p)
	}
	if spec := tbl.Spec(); spec.NumFields() != 1 {
		t.Errorf("partition spec %v", tbl.Spec())
	}
	if got := ingestTableRows(t, tbl); got != 10 {
		t.Errorf("rows %d", got)
	}
	if r := runCLI(t, wh, false, "validate", "--table", "gis.v3"); r.Code != exitOK {
		t.Errorf("validate v3: %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	// Data in another CRS is refused against the v3 type's CRS.
	crs84 := writeGeoParquet(t, dir, "crs84", validatetest.File{Rows: validatetest.Points(3), Geo: validatetest.Geo(""), Extra: true, NoBBox: true})
	if r := runCLI(t, wh, false, "ingest", "--table", "gis.v3", crs84); r.Code != exitViolation || !strings.Contains(r.Stdout, "crs.mismatch") {
		t.Errorf("CRS drift on v3: %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
}

// TestIngestConcurrent runs ingests into one table at the same time: the
// losers of each commit race replay on the fresh head, so every batch
// lands exactly once.
func TestIngestConcurrent(t *testing.T) {
	wh, dir := t.TempDir(), t.TempDir()
	first := writeGeoParquet(t, dir, "first", validatetest.File{Rows: validatetest.Points(5), Geo: validatetest.Geo(""), Extra: true})
	if r := runCLI(t, wh, false, "ingest", "--table", "gis.c", "--create", first); r.Code != exitOK {
		t.Fatalf("create: %d %s", r.Code, r.Stderr)
	}
	const writers = 4
	codes := make([]cliResult, writers)
	var wg sync.WaitGroup
	for i := range writers {
		p := writeGeoParquet(t, dir, fmt.Sprintf("w%d", i), validatetest.File{Rows: validatetest.Points(10 + i), Geo: validatetest.Geo(""), Extra: true})
		wg.Go(func() { codes[i] = runCLI(t, wh, false, "ingest", "--table", "gis.c", p) })
	}
	wg.Wait()
	for i, r := range codes {
		if r.Code != exitOK {
			t.Errorf("writer %d: exit %d\n%s\n%s", i, r.Code, r.Stdout, r.Stderr)
		}
	}
	tbl := ingestLoadTable(t, wh, "gis.c")
	if got, want := ingestTableRows(t, tbl), int64(5+10+11+12+13); got != want {
		t.Errorf("rows %d, want %d", got, want)
	}
	if n := len(tbl.Metadata().Snapshots()); n != 1+writers {
		t.Errorf("%d snapshots, want %d", n, 1+writers)
	}
}

// TestValidateTableText checks the text report of a table whose CRS is not
// the one asked for: one table-level finding, not one per file.
func TestValidateTableText(t *testing.T) {
	wh, dir := t.TempDir(), t.TempDir()
	src := writeGeoParquet(t, dir, "pts", validatetest.File{Rows: validatetest.Points(5), Geo: validatetest.Geo(""), Extra: true, NoBBox: true})
	if r := runCLI(t, wh, false, "ingest", "--table", "gis.v", "--create", "--add-bbox", src); r.Code != exitOK {
		t.Fatalf("create: %d %s", r.Code, r.Stderr)
	}
	r := runCLI(t, wh, false, "validate", "--table", "gis.v", "--crs", "EPSG:3857", "--max-examples", "1")
	if r.Code != exitViolation {
		t.Fatalf("exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if !strings.Contains(r.Stdout, "gis.v: 5 rows, 1 violations") || !strings.Contains(r.Stdout, "table CRS OGC:CRS84 differs from the expected EPSG:3857") {
		t.Errorf("stdout:\n%s", r.Stdout)
	}
}

// losingCatalog refuses every commit as if another writer always got
// there first.
// TestIngestCoveringNeedsAddBBox checks that a GeoParquet 1.1 file with a
// covering column but no bbox columns is refused for a v2 table unless
// --add-bbox computes them, rather than landing with null boxes.
func TestIngestCoveringNeedsAddBBox(t *testing.T) {
	wh := t.TempDir()
	src := fixture("ok-covering-other-layout")
	r := runCLI(t, wh, false, "ingest", "--table", "gis.cov", "--create", src)
	if r.Code != exitError || !strings.Contains(r.Stderr, `"bbox_minx" is missing`) {
		t.Fatalf("exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	r = runCLI(t, wh, false, "ingest", "--table", "gis.cov", "--create", "--add-bbox", src)
	if r.Code != exitOK {
		t.Fatalf("--add-bbox: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if r := runCLI(t, wh, false, "validate", "--table", "gis.cov"); r.Code != exitOK {
		t.Errorf("validate: %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
}

// TestIngestTwiceSkips runs a retried delivery: the second ingest of the
// same file, here arriving through a directory argument, skips it and
// exits 0; --allow-duplicates appends it again.
func TestIngestTwiceSkips(t *testing.T) {
	wh, dir := t.TempDir(), t.TempDir()
	p := writeGeoParquet(t, dir, "batch", validatetest.File{Rows: validatetest.Points(6), Geo: validatetest.Geo(""), Extra: true})
	r := runCLI(t, wh, false, "ingest", "--table", "gis.r", "--create", p)
	require.Equal(t, exitOK, r.Code, r.Stderr)
	r = runCLI(t, wh, false, "ingest", "--table", "gis.r", dir)
	require.Equal(t, exitOK, r.Code, r.Stderr)
	assert.Contains(t, r.Stderr, "skipped "+p+": already ingested as batch.parquet in snapshot")
	assert.Contains(t, r.Stderr, "--allow-duplicates")
	assert.Contains(t, r.Stderr, "nothing committed: all 1 files were skipped")
	assert.Regexp(t, `(?m)^gis\.r\s+false\s+0\s+0\s+-$`, r.Stdout, "no snapshot claimed")
	assert.Equal(t, int64(6), ingestTableRows(t, ingestLoadTable(t, wh, "gis.r")))
	r = runCLI(t, wh, false, "ingest", "--table", "gis.r", "--allow-duplicates", p)
	require.Equal(t, exitOK, r.Code, r.Stderr)
	assert.Equal(t, int64(12), ingestTableRows(t, ingestLoadTable(t, wh, "gis.r")))
	r = runCLI(t, wh, false, "ingest", "--table", "gis.r", t.TempDir())
	assert.Equal(t, exitUsage, r.Code, r.Stderr)
	assert.Contains(t, r.Stderr, "holds no *.parquet files")
}

// TestIngestSkipLineQuotesHostileNames checks that a skipped file whose
// name holds a line break or an escape sequence is printed quoted on one
// line, so a file name cannot forge or hide lines of the report.
func TestIngestSkipLineQuotesHostileNames(t *testing.T) {
	wh, dir := t.TempDir(), t.TempDir()
	name := "batch\nskipped other.parquet: \x1b[2Kforged"
	p := writeGeoParquet(t, dir, name, validatetest.File{Rows: validatetest.Points(4), Geo: validatetest.Geo(""), Extra: true})
	r := runCLI(t, wh, false, "ingest", "--table", "gis.q", "--create", p)
	require.Equal(t, exitOK, r.Code, r.Stderr)
	r = runCLI(t, wh, false, "ingest", "--table", "gis.q", dir)
	require.Equal(t, exitOK, r.Code, r.Stderr)
	assert.NotContains(t, r.Stderr, "\x1b", "an escape sequence reached the terminal")
	lines := strings.Split(strings.TrimSpace(r.Stderr), "\n")
	require.Len(t, lines, 2, r.Stderr)
	assert.Contains(t, lines[0], "skipped "+strconv.Quote(p)+": already ingested as ")
	assert.Equal(t, "nothing committed: all 1 files were skipped; gis.q is unchanged", lines[1])
}

// TestIngestMemoryBudgetFlag checks that --memory-budget takes sizes with
// units into the ingest (a small budget reads many batches and lands the
// same rows) and refuses a malformed or too small one by name, exit 2,
// before anything is written.
func TestIngestMemoryBudgetFlag(t *testing.T) {
	wh, dir := t.TempDir(), t.TempDir()
	p := writeGeoParquet(t, dir, "pings", validatetest.File{Rows: validatetest.Points(500), Geo: validatetest.Geo(""), Extra: true})
	for _, bad := range []string{"lots", "512k", "1KiB", "-5MiB"} {
		r := runCLI(t, wh, false, "ingest", "--table", "gis.m", "--create", "--memory-budget", bad, p)
		assert.Equal(t, exitUsage, r.Code, bad)
		assert.Contains(t, r.Stderr, "--memory-budget", bad)
		assert.NoDirExists(t, filepath.Join(wh, "gis.db", "m"), bad)
	}
	r := runCLI(t, wh, false, "ingest", "--table", "gis.m", "--create", "--memory-budget", "1MiB", p)
	require.Equal(t, exitOK, r.Code, r.Stderr)
	assert.Equal(t, int64(500), ingestTableRows(t, ingestLoadTable(t, wh, "gis.m")))
}
