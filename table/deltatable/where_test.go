package deltatable_test

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/delta/deltatest"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/internal/testing/enginetest"
	"github.com/geocompact/geocompact/table/optval"
)

// statsSchema is a table with a timestamp, a string, a nested double, a
// nullable long and a string partition column, all column-mapped.
var statsSchema = `{"type":"struct","fields":[` + field(1, "id", "long") + "," + field(2, "ts", "timestamp") + "," +
	field(3, "name", "string") + "," +
	`{"name":"m","type":{"type":"struct","fields":[` + field(5, "v", "double") + `]},"nullable":true,"metadata":{"delta.columnMapping.id":4,"delta.columnMapping.physicalName":"col-m"}},` +
	field(6, "n", "long") + "," + field(7, "day", "string") + `]}`

// statsRow is one row of the stats table; a nil n is null.
type statsRow struct {
	ts   time.Time
	name string
	v    float64
	n    *int64
}

// hour is 2026-01-01 at h o'clock UTC plus min minutes.
func hour(h, min int) time.Time { return time.Date(2026, 1, 1, h, min, 0, 0, time.UTC) }

func ptr(n int64) *int64 { return &n }

// statsTable creates the stats table and appends six files: a to d in
// day 2026-01-01 with disjoint six-hour ts ranges and m.v ranges, e in
// day 2026-01-02 (ts on that day), and nostats in day 2026-01-01 holding
// the same range as a but written without statistics. Column n is null in
// every row of a, in some rows of c, and never in b, d, e and nostats.
// Every name of d is 40 characters long, and d's recorded name maximum is
// cut to 32 characters without a marker, as some writers cut it.
func statsTable(t *testing.T) (*delta.Table, string) {
	t.Helper()
	dir := t.TempDir()
	tbl, err := delta.OpenLocal(dir)
	require.NoError(t, err)
	proto := &delta.Protocol{MinReaderVersion: 2, MinWriterVersion: 5}
	md := &delta.Metadata{ID: "s", Format: delta.Format{Provider: "parquet"}, SchemaString: statsSchema, PartitionColumns: []string{"day"},
		Configuration: map[string]string{"delta.columnMapping.mode": "name"}}
	require.NoError(t, delta.Commit(t.Context(), tbl, 0, []delta.Action{
		delta.NewCommitInfo("CREATE TABLE", nil, -1, nil), {Protocol: proto}, {MetaData: md}}))
	long := strings.Repeat("z", 40)
	span := func(h int, name string, v float64, n func(i int) *int64) []statsRow {
		var rows []statsRow
		for i := range 6 {
			rows = append(rows, statsRow{ts: hour(h+i, 30), name: name, v: v + float64(i), n: n(i)})
		}
		return rows
	}
	adds := []*delta.Add{
		writeStatsFile(t, tbl, "a", "2026-01-01", span(0, "alpha", 0, func(int) *int64 { return nil })),
		writeStatsFile(t, tbl, "b", "2026-01-01", span(6, "bravo", 10, func(i int) *int64 { return ptr(int64(i)) })),
		writeStatsFile(t, tbl, "c", "2026-01-01", span(12, "charlie", 20, func(i int) *int64 {
			if i%2 == 0 {
				return nil
			}
			return ptr(int64(i))
		})),
		writeStatsFile(t, tbl, "d", "2026-01-01", span(18, long, 30, func(i int) *int64 { return ptr(10 + int64(i)) })),
		writeStatsFile(t, tbl, "e", "2026-01-02", span(24, "echo", 40, func(i int) *int64 { return ptr(20 + int64(i)) })),
		writeStatsFile(t, tbl, "nostats", "2026-01-01", span(0, "alpha", 0, func(i int) *int64 { return ptr(int64(i)) })),
	}
	adds[5].Stats = ""
	st, err := adds[3].ParsedStats()
	require.NoError(t, err)
	st.MaxValues["col-name"] = strings.Repeat("z", 32)
	adds[3].Stats, err = st.JSON()
	require.NoError(t, err)
	deltatest.Append(t, tbl, adds...)
	return tbl, dir
}

// writeStatsFile writes rows as the file day=<day>/<name>.parquet.
func writeStatsFile(t *testing.T, tbl *delta.Table, name, day string, rows []statsRow) *delta.Add {
	t.Helper()
	s := deltatest.Snapshot(t, tbl)
	sc, err := s.ArrowSchema()
	require.NoError(t, err)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for i, r := range rows {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(r.ts.UnixMicro()))
		b.Field(2).(*array.StringBuilder).Append(r.name)
		m := b.Field(3).(*array.StructBuilder)
		m.Append(true)
		m.FieldBuilder(0).(*array.Float64Builder).Append(r.v)
		if r.n == nil {
			b.Field(4).AppendNull()
		} else {
			b.Field(4).(*array.Int64Builder).Append(*r.n)
		}
		b.Field(5).(*array.StringBuilder).Append(day)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	pv := day
	w, err := tbl.NewFileWriter(t.Context(), s, "day="+day+"/"+name+".parquet", map[string]*string{"col-day": &pv}, nil)
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	a, err := w.Close()
	require.NoError(t, err)
	return a
}

// planned names the files a result's plan rewrites ("a", "nostats"),
// sorted.
func planned(res *engine.Result) []string {
	var out []string
	for _, g := range res.Plan.Groups {
		for _, f := range g.Files {
			out = append(out, strings.TrimSuffix(path.Base(f.Path), ".parquet"))
		}
	}
	slices.Sort(out)
	return out
}

// TestWhereDataColumns scopes dry runs by predicates on data columns:
// each selects exactly the files whose statistics may hold a match, the
// file without statistics always (for data columns), and nothing is
// written.
func TestWhereDataColumns(t *testing.T) {
	tbl, dir := statsTable(t)
	version := deltatest.Snapshot(t, tbl).Version
	for _, c := range []struct {
		where string
		want  []string
	}{
		{"ts >= '2026-01-01 12:00'", []string{"c", "d", "e", "nostats"}},
		{"ts < '2026-01-01 06:00'", []string{"a", "nostats"}},
		// a's last row is 05:30, c's first 12:30: no offset means UTC
		{"ts BETWEEN '2026-01-01 05:45' AND '2026-01-01 12:15'", []string{"b", "nostats"}},
		{"ts > '2026-01-01 13:00+02:00'", []string{"b", "c", "d", "e", "nostats"}},
		{"ts >= TIMESTAMP '2026-01-01 11:30'", []string{"b", "c", "d", "e", "nostats"}},
		{"ts < '2026-01-01T12:30:00Z'", []string{"a", "b", "nostats"}},
		{"m.v >= 25 AND m.v < 31", []string{"c", "d", "nostats"}},
		{"m.v IN (3, 44)", []string{"a", "e", "nostats"}},
		{"NOT (m.v < 40)", []string{"e", "nostats"}},
		{"name = 'bravo'", []string{"b", "nostats"}},
		{"name > 'zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz'", []string{"d", "nostats"}},
		{"n IS NULL", []string{"a", "c", "nostats"}},
		{"n IS NOT NULL", []string{"b", "c", "d", "e", "nostats"}},
		{"n >= 0", []string{"b", "c", "d", "e", "nostats"}},
		{"n > 12", []string{"d", "e", "nostats"}},
		{"day = '2026-01-02' OR m.v < 1", []string{"a", "e", "nostats"}},
		{"day = '2026-01-02'", []string{"e"}},
		{"day = '2026-01-01' AND ts >= '2026-01-02'", []string{"nostats"}},
		{"TRUE", []string{"a", "b", "c", "d", "e", "nostats"}},
		{"FALSE", nil},
	} {
		t.Run(c.where, func(t *testing.T) {
			res, err := enginetest.RewriteDelta(t.Context(), dir, engine.Request{Where: c.where, DryRun: true,
				Options: opts("rewrite-all", "true")})
			require.NoError(t, err)
			assert.Equal(t, c.want, planned(res))
			assert.True(t, res.DryRun)
		})
	}
	assert.Equal(t, version, deltatest.Snapshot(t, tbl).Version, "a dry run commits nothing")
}

// TestWhereRewritesSelectedFiles rewrites the files a data-column
// predicate selects: exactly those are removed, the others stay, and the
// rows and their checksum are unchanged.
func TestWhereRewritesSelectedFiles(t *testing.T) {
	tbl, dir := statsTable(t)
	before := statsRows(t, tbl)
	res, err := enginetest.RewriteDelta(t.Context(), dir, engine.Request{Where: "ts >= '2026-01-01 06:00' AND ts < '2026-01-01 18:00'",
		Options: opts("rewrite-all", "true")})
	require.NoError(t, err)
	assert.True(t, res.Verified)
	assert.Equal(t, 3, res.RewrittenDataFilesCount)
	var removed []string
	for _, a := range lastCommit(t, tbl) {
		if a.Remove != nil {
			removed = append(removed, strings.TrimSuffix(path.Base(a.Remove.Path), ".parquet"))
		}
	}
	slices.Sort(removed)
	assert.Equal(t, []string{"b", "c", "nostats"}, removed)
	assert.Equal(t, before, statsRows(t, tbl))
	live := map[string]bool{}
	for _, a := range deltatest.Snapshot(t, tbl).Files {
		live[path.Base(a.Path)] = true
	}
	for _, keep := range []string{"a", "d", "e"} {
		assert.True(t, live[keep+".parquet"], keep)
	}
}

// statsRows returns every live row of the stats table, sorted.
func statsRows(t *testing.T, tbl *delta.Table) []string {
	t.Helper()
	s := deltatest.Snapshot(t, tbl)
	var out []string
	require.NoError(t, tbl.Read(t.Context(), s, delta.ReadOptions{}, func(_ *delta.Add, rec arrow.RecordBatch) error {
		for i := range int(rec.NumRows()) {
			var cells []string
			for c := range int(rec.NumCols()) {
				cells = append(cells, rec.Column(c).ValueStr(i))
			}
			out = append(out, strings.Join(cells, "|"))
		}
		return nil
	}))
	slices.Sort(out)
	return out
}

// TestWhereRefusals checks what a Delta --where refuses before anything
// is written: an unknown column, named with the table's columns, and a
// literal that does not fit its column.
func TestWhereRefusals(t *testing.T) {
	tbl, dir := statsTable(t)
	version := deltatest.Snapshot(t, tbl).Version
	for _, c := range []struct {
		where string
		want  []string
	}{
		{"nope > 3", []string{`unknown column "nope"`, "id, ts, name, m, n, day"}},
		{"m.nope = 1", []string{`unknown column "m.nope"`}},
		{"ts > 'yesterday'", []string{`"ts"`, "timestamp"}},
		{"name LIKE 'z%'", []string{"LIKE"}},
		{"ts > now() - interval '1000000 years'", []string{"out of range"}},
	} {
		_, err := enginetest.RewriteDelta(t.Context(), dir, engine.Request{Where: c.where, Options: opts("rewrite-all", "true")})
		require.ErrorIs(t, err, optval.ErrBad, c.where)
		for _, w := range c.want {
			assert.Contains(t, err.Error(), w)
		}
	}
	assert.Equal(t, version, deltatest.Snapshot(t, tbl).Version)
	list, err := tbl.Store.List(t.Context(), "", true)
	require.NoError(t, err)
	var data int
	for _, p := range list {
		if strings.HasSuffix(p.Path, ".parquet") {
			data++
		}
	}
	assert.Equal(t, 6, data, "no data file was written")
}

// TestWhereBBoxCovering scopes by bbox(…) on a table whose boxes are a
// covering struct: the window test uses each file's bound from the
// struct's statistics.
func TestWhereBBoxCovering(t *testing.T) {
	dir := t.TempDir()
	tbl := deltatest.Create(t, dir, deltatest.Options{Covering: true})
	var adds []*delta.Add
	for i := range 4 {
		x := float64(i * 10)
		adds = append(adds, deltatest.WriteFile(t, tbl, fmt.Sprintf("f%d.parquet", i), "", int64(i*10),
			deltatest.Point(t, x, 0), deltatest.Point(t, x+5, 5)))
	}
	deltatest.Append(t, tbl, adds...)
	for _, c := range []struct {
		where string
		want  []string
	}{
		{"bbox(0, 0, 4, 4)", []string{"f0"}},
		{"bbox(5, 5, 10, 10)", []string{"f0", "f1"}},
		{"bbox(100, 0, 110, 10)", nil},
		{"bbox.xmin >= 20", []string{"f2", "f3"}},
	} {
		res, err := enginetest.RewriteDelta(t.Context(), dir, engine.Request{Where: c.where, DryRun: true, Options: opts("rewrite-all", "true")})
		require.NoError(t, err, c.where)
		assert.Equal(t, c.want, planned(res), c.where)
	}
}
