package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/delta/deltatest"
	"github.com/geocompact/geocompact/internal/testing/reliability"
	"github.com/geocompact/geocompact/validate/validatetest"
)

// benchArrivals writes n GeoParquet files of rows points each, every file
// spread over the same clustered extent (arrivals that overlap), and
// returns their paths in arrival order.
func benchArrivals(t *testing.T, n, rows int) []string {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 11))
	centres := [][2]float64{{-120, 40}, {10, 50}, {140, -30}, {-60, -20}}
	dir := t.TempDir()
	var paths []string
	for i := range n {
		pts := make([]validatetest.Row, rows)
		for j := range pts {
			c := centres[rng.IntN(len(centres))]
			x, y := c[0]+rng.NormFloat64()*15, c[1]+rng.NormFloat64()*10
			pts[j] = validatetest.Row{WKB: validatetest.Point(x, y), BBox: validatetest.Box(x, y, x, y)}
		}
		paths = append(paths, writeGeoParquet(t, dir, fmt.Sprintf("arrival%02d", i), validatetest.File{Rows: pts, Geo: validatetest.Geo(""), Extra: true}))
	}
	return paths
}

// ingestEach ingests each file in its own commit into the --table or
// --delta target given by args, creating it with the first.
func ingestEach(t *testing.T, wh string, files []string, args ...string) {
	t.Helper()
	for i, f := range files {
		a := append(append([]string{"ingest"}, args...), f)
		if i == 0 {
			a = append(a, "--create")
		}
		r := runCLI(t, wh, false, a...)
		require.Equal(t, exitOK, r.Code, r.Stderr)
	}
}

// benchWindowsFile writes n windows of a tenth of the extent's side each,
// placed at random, as a --windows file.
func benchWindowsFile(t *testing.T, n int) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(3, 5))
	var ws []string
	for range n {
		x, y := -150+rng.Float64()*280, -60+rng.Float64()*120
		ws = append(ws, fmt.Sprintf(`{"minx":%g,"miny":%g,"maxx":%g,"maxy":%g}`, x, y, x+30, y+15))
	}
	p := filepath.Join(t.TempDir(), "windows.json")
	require.NoError(t, os.WriteFile(p, []byte("["+strings.Join(ws, ",")+"]"), 0o644))
	return p
}

// benchJSON runs bench with args and decodes its report.
func benchJSON(t *testing.T, wh string, args ...string) bench.Report {
	t.Helper()
	r := runCLI(t, wh, false, append([]string{"--json", "bench"}, args...)...)
	require.Equal(t, exitOK, r.Code, r.Stderr)
	var rep bench.Report
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &rep), r.Stdout)
	return rep
}

// deltaState lists every file under a Delta table's directory with its
// size and modification time: what a read-only command leaves unchanged.
func deltaState(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	eachFile(t, dir, func(p string, info fs.FileInfo) {
		out[p] = fmt.Sprint(info.Size(), info.ModTime().UnixNano())
	})
	return out
}

func TestBenchDeltaMatchesIceberg(t *testing.T) {
	files := benchArrivals(t, 6, 400)
	wh, lake := t.TempDir(), filepath.Join(t.TempDir(), "pings")
	ingestEach(t, wh, files, "--table", "b.pings")
	ingestEach(t, wh, files, "--delta", lake)
	before := deltaState(t, lake)
	windows := benchWindowsFile(t, 40)
	args := []string{"--layouts", "current,unsorted,linear,hilbert,str", "--windows", windows, "--option", "target-file-size-bytes=12000"}

	ice := benchJSON(t, wh, append([]string{"--table", "b.pings"}, args...)...)
	del := benchJSON(t, wh, append([]string{"--delta", lake}, args...)...)
	assert.Equal(t, before, deltaState(t, lake), "bench wrote nothing into the Delta table")
	assert.Equal(t, lake, del.Table)
	assert.Equal(t, bench.ArrivalHistory, del.ArrivalOrder)
	assert.Equal(t, ice.Rows, del.Rows)
	assert.Equal(t, int64(2400), del.Rows)
	assert.Equal(t, ice.Extent, del.Extent)
	require.Len(t, del.Layouts, 5)
	for i, l := range del.Layouts {
		want := ice.Layouts[i]
		require.Equal(t, want.Layout, l.Layout)
		assert.Greater(t, l.Files, 2, "%s: the rows cut at the target size", l.Layout)
		if l.Layout == bench.Current {
			// One file per ingest commit in each format, planned by each
			// format's own statistics of the same rows.
			assert.Equal(t, want.Files, l.Files)
			assert.Equal(t, want.MeanFilesPlanned, l.MeanFilesPlanned)
			continue
		}
		assert.Equal(t, want.Files, l.Files, "%s files", l.Layout)
		assert.Equal(t, want.Rows, l.Rows, "%s rows", l.Layout)
		assert.Equal(t, want.MeanFilesPlanned, l.MeanFilesPlanned, "%s mean files planned", l.Layout)
		assert.Equal(t, want.MedianFilesPlanned, l.MedianFilesPlanned, "%s median", l.Layout)
		assert.Equal(t, want.P95FilesPlanned, l.P95FilesPlanned, "%s p95", l.Layout)
		assert.Equal(t, want.MeanFilesWithMatches, l.MeanFilesWithMatches, "%s files with matches", l.Layout)
		assert.Equal(t, want.MeanLowerBound, l.MeanLowerBound, "%s lower bound", l.Layout)
		assert.Equal(t, want.MeanOverlapDepth, l.MeanOverlapDepth, "%s overlap", l.Layout)
	}
	byName := map[bench.Layout]bench.LayoutReport{}
	for _, l := range del.Layouts {
		byName[l.Layout] = l
	}
	assert.Less(t, byName["hilbert"].MeanFilesPlanned, byName[bench.Unsorted].MeanFilesPlanned)
}

func TestBenchDeltaAfterRewrite(t *testing.T) {
	files := benchArrivals(t, 8, 300)
	lake := filepath.Join(t.TempDir(), "pings")
	ingestEach(t, "", files, "--delta", lake)
	r := runCLI(t, "", false, "rewrite", "--delta", lake, "--curve", "hilbert", "--option", "target-file-size-bytes=12000", "--option", "rewrite-all=true")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	before := deltaState(t, lake)

	rep := benchJSON(t, "", "--delta", lake, "--layouts", "current,unsorted", "--window-count", "30", "--option", "target-file-size-bytes=12000")
	assert.Equal(t, before, deltaState(t, lake), "bench wrote nothing into the Delta table")
	require.Len(t, rep.Layouts, 2)
	current, unsorted := rep.Layouts[0], rep.Layouts[1]
	assert.Equal(t, bench.Current, current.Layout)
	assert.Equal(t, bench.ArrivalHistory, rep.ArrivalOrder, "the appends' files are still on storage")
	assert.Less(t, current.MeanOverlapDepth, 2.0, "the table is the rewrite's Hilbert files")
	assert.Less(t, current.MeanFilesPlanned, unsorted.MeanFilesPlanned, "the Hilbert files plan fewer than arrival order")
	assert.Equal(t, rep.Rows, current.Rows)
	assert.Equal(t, rep.Rows, unsorted.Rows)
}

func TestBenchDeltaDefaultsAndErrors(t *testing.T) {
	lake := filepath.Join(t.TempDir(), "pings")
	ingestEach(t, "", benchArrivals(t, 2, 200), "--delta", lake)
	// The default layouts start with the table as it is.
	r := runCLI(t, "", false, "bench", "--delta", lake, "--window-count", "5", "--csv")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(r.Stdout), "\n")[1:] {
		got = append(got, strings.Split(line, ",")[2])
	}
	want := make([]string, len(bench.AllLayouts))
	for i, l := range bench.AllLayouts {
		want[i] = string(l)
	}
	assert.Equal(t, want, got)
	assert.Equal(t, "current", got[0])

	missing := filepath.Join(t.TempDir(), "nothing-here")
	r = runCLI(t, "", false, "bench", "--delta", missing)
	assert.Equal(t, exitError, r.Code)
	assert.Contains(t, r.Stderr, "open Delta table "+missing)
	_, err := os.Stat(missing)
	assert.ErrorIs(t, err, fs.ErrNotExist, "nothing created at a bad location")

	for _, args := range [][]string{
		{"bench", "--delta", lake, "--table", "b.t"},
		{"bench", "--delta", lake, "--keep"},
		{"bench"},
	} {
		r := runCLI(t, "", false, args...)
		assert.Equal(t, exitUsage, r.Code, "%v: %s", args, r.Stderr)
	}
	assert.True(t, slices.Contains(bench.AllLayouts, bench.Current))
}

// TestBenchDeltaS3 benches a partitioned Delta table on the loopback S3
// server: the scratch copies keep its partitions, and the table is only
// read.
func TestBenchDeltaS3(t *testing.T) {
	loc, tbl := s3DeltaTable(t)
	deltatest.CreateIn(t, tbl, deltatest.Options{Partitioned: true})
	p := func(x, y float64) deltatest.Row { return deltatest.Point(t, x, y) }
	deltatest.Append(t, tbl,
		deltatest.WriteFile(t, tbl, "a.parquet", "x", 0, p(1, 2), p(3, 4), p(5, 5)),
		deltatest.WriteFile(t, tbl, "b.parquet", "y", 3, p(5, 6), p(7, 7)))
	version := deltatest.Snapshot(t, tbl).Version

	rep := benchJSON(t, "", "--delta", loc, "--layouts", "current,unsorted,hilbert", "--window-count", "4")
	assert.Equal(t, int64(5), rep.Rows)
	require.Len(t, rep.Layouts, 3)
	for _, l := range rep.Layouts {
		assert.Equal(t, 2, l.Files, "%s: one file per partition", l.Layout)
		assert.Equal(t, int64(5), l.Rows)
	}
	assert.Equal(t, version, deltatest.Snapshot(t, tbl).Version, "no commit")
}

// s3DeltaTable returns the location of a Delta table, not yet created, on
// the loopback S3 server, and the table there.
func s3DeltaTable(t *testing.T) (string, *delta.Table) {
	t.Helper()
	srv := reliability.UseS3(t)
	t.Setenv("AWS_ENDPOINT_URL_S3", srv.Endpoint)
	loc := "s3://" + srv.Bucket + "/" + srv.Prefix + "/pings"
	st, err := delta.NewS3Storage(t.Context(), loc)
	require.NoError(t, err)
	return loc, &delta.Table{Store: st}
}
