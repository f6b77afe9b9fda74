package deltatable_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/ingest"
	"github.com/geocompact/geocompact/internal/testing/reliability"
	format "github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/deltatable"
	"github.com/geocompact/geocompact/validate"
	"github.com/geocompact/geocompact/validate/validatetest"
)

// pointsFile writes a valid GeoParquet file of n points with bbox columns.
func pointsFile(t testing.TB, n int) string { return validatetest.PointsFile(t, n) }

func deltaConfig(create bool, files ...string) ingest.Config {
	return ingest.Config{Files: files, Create: create, Checks: validate.DefaultConfig()}
}

// deltaRows reads the rows of the table at loc as "id|region|WKB hex|minx"
// strings, sorted; columns the table lacks read as "-".
func deltaRows(t testing.TB, loc string) []string {
	t.Helper()
	tbl, err := delta.Open(t.Context(), loc)
	require.NoError(t, err)
	s, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	var out []string
	require.NoError(t, tbl.Read(t.Context(), s, delta.ReadOptions{}, func(_ *delta.Add, rec arrow.RecordBatch) error {
		for r := range int(rec.NumRows()) {
			out = append(out, rowString(rec, r))
		}
		return nil
	}))
	slices.Sort(out)
	return out
}

func rowString(rec arrow.RecordBatch, r int) string {
	cell := func(name string) string {
		idx := rec.Schema().FieldIndices(name)
		if len(idx) == 0 {
			return "-"
		}
		c := rec.Column(idx[0])
		if b, ok := c.(*array.Binary); ok {
			return fmt.Sprintf("%x", b.Value(r))
		}
		return c.ValueStr(r)
	}
	return strings.Join([]string{cell("id"), cell("region"), cell("geometry"), cell("bbox_minx")}, "|")
}

// inputRows reads a GeoParquet file's rows as deltaRows renders them.
func inputRows(t testing.TB, paths ...string) []string {
	t.Helper()
	var out []string
	for _, p := range paths {
		f, err := os.Open(p)
		require.NoError(t, err)
		pf, err := file.NewParquetReader(f)
		require.NoError(t, err)
		fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 1024}, memory.DefaultAllocator)
		require.NoError(t, err)
		tbl, err := fr.ReadTable(t.Context())
		require.NoError(t, err)
		tr := array.NewTableReader(tbl, 1024)
		for tr.Next() {
			rec := tr.RecordBatch()
			for r := range int(rec.NumRows()) {
				out = append(out, rowString(rec, r))
			}
		}
		tr.Release()
		tbl.Release()
		require.NoError(t, pf.Close())
	}
	slices.Sort(out)
	return out
}

// logVersions lists the commit files of the table at loc.
func logVersions(t testing.TB, loc string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(loc, "_delta_log", "*.json"))
	require.NoError(t, err)
	return m
}

// deltaDataFiles lists the Parquet files under loc outside the log.
func deltaDataFiles(t testing.TB, loc string) []string {
	t.Helper()
	var out []string
	_ = filepath.WalkDir(loc, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.Contains(p, "_delta_log") {
			out = append(out, p)
		}
		return nil
	})
	slices.Sort(out)
	return out
}

func TestAppendCreateReadBackAndRerun(t *testing.T) {
	loc := filepath.Join(t.TempDir(), "pts")
	a := pointsFile(t, 5)
	b := pointsFileWith(t, validatetest.File{Rows: validatetest.Points(9)[6:], Geo: validatetest.Geo(""), Extra: true})

	res, err := ingest.Run(t.Context(), deltatable.Appender(loc), deltaConfig(true, a, b))
	require.NoError(t, err)
	assert.Equal(t, ingest.Result{Table: loc, Created: true, Commit: 0, Committed: true, Files: 2, DataFiles: 2, Rows: 8}, *res)
	assert.Equal(t, inputRows(t, a, b), deltaRows(t, loc))

	tbl, err := delta.OpenLocal(loc)
	require.NoError(t, err)
	s, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	assert.Equal(t, "geometry", s.Metadata.Configuration["geocompact.geometry.column"])
	assert.Len(t, s.Txns, 2)
	for _, v := range s.Txns {
		assert.Equal(t, int64(0), v)
	}
	var rows int64
	for _, f := range s.Files {
		st, err := f.ParsedStats()
		require.NoError(t, err)
		rows += st.NumRecords
		_, ok := st.Min("bbox_minx")
		assert.True(t, ok, "no min of bbox_minx in %s", f.Stats)
		p, err := f.DecodedPath()
		require.NoError(t, err)
		assert.Contains(t, footerValue(t, filepath.Join(loc, p), "geo"), `"primary_column":"geometry"`)
	}
	assert.Equal(t, int64(8), rows)

	// A re-run commits nothing and names the version that holds each file.
	res, err = ingest.Run(t.Context(), deltatable.Appender(loc), deltaConfig(false, a, b))
	require.NoError(t, err)
	assert.Equal(t, 0, res.Files)
	require.Len(t, res.Skipped, 2)
	for _, sk := range res.Skipped {
		require.NotNil(t, sk.Commit)
		assert.Equal(t, int64(0), *sk.Commit)
	}
	assert.Len(t, logVersions(t, loc), 1)
	assert.Len(t, deltaDataFiles(t, loc), 2)

	// A batch with one new file appends only that one.
	c := pointsFile(t, 2)
	res, err = ingest.Run(t.Context(), deltatable.Appender(loc), deltaConfig(false, a, c))
	require.NoError(t, err)
	assert.Equal(t, int64(1), res.Commit)
	assert.Equal(t, 1, res.Files)
	assert.Len(t, res.Skipped, 1)
	assert.Len(t, deltaRows(t, loc), 10)
}

func pointsFileWith(t testing.TB, f validatetest.File) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f.parquet")
	validatetest.Write(t, p, f)
	return p
}

// footerValue reads a key of a Parquet file's footer metadata.
func footerValue(t testing.TB, p, key string) string {
	t.Helper()
	pf, err := file.OpenParquetFile(p, false)
	require.NoError(t, err)
	defer pf.Close()
	if kv := pf.MetaData().KeyValueMetadata().FindValue(key); kv != nil {
		return *kv
	}
	return ""
}

func TestAppendRefusesInvalidGeometry(t *testing.T) {
	loc := t.TempDir()
	good := pointsFile(t, 4)
	_, err := ingest.Run(t.Context(), deltatable.Appender(loc), deltaConfig(true, good))
	require.NoError(t, err)
	before := deltaDataFiles(t, loc)

	bad := pointsFileWith(t, validatetest.File{Rows: append(validatetest.Points(3), validatetest.Row{WKB: []byte{1, 1, 0}, BBox: validatetest.Box(0, 0, 0, 0)}), Geo: validatetest.Geo(""), Extra: true})
	_, err = ingest.Run(t.Context(), deltatable.Appender(loc), deltaConfig(false, pointsFile(t, 2), bad))
	refused, ok := errors.AsType[*ingest.RefusedError](err)
	require.True(t, ok, "want a refusal, got %v", err)
	assert.Contains(t, refused.Error(), "nothing was written")
	assert.Len(t, logVersions(t, loc), 1)
	assert.Equal(t, before, deltaDataFiles(t, loc))

	// On a missing table with --create, nothing at all appears.
	fresh := filepath.Join(t.TempDir(), "fresh")
	_, err = ingest.Run(t.Context(), deltatable.Appender(fresh), deltaConfig(true, bad))
	require.Error(t, err)
	_, statErr := os.Stat(fresh)
	assert.True(t, os.IsNotExist(statErr), "location created: %v", statErr)
}

func TestAppendMissingTableNeedsCreate(t *testing.T) {
	loc := filepath.Join(t.TempDir(), "none")
	_, err := ingest.Run(t.Context(), deltatable.Appender(loc), deltaConfig(false, pointsFile(t, 2)))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no Delta table at "+loc)
	assert.ErrorIs(t, err, ingest.ErrNoTable, "the error says the table may be created")
	_, statErr := os.Stat(loc)
	assert.True(t, os.IsNotExist(statErr))
}

func TestAppendSchemaDiffers(t *testing.T) {
	loc := t.TempDir()
	noID := pointsFileWith(t, validatetest.File{Rows: validatetest.Points(3), Geo: validatetest.Geo("")})
	_, err := ingest.Run(t.Context(), deltatable.Appender(loc), deltaConfig(true, noID))
	require.NoError(t, err)

	_, err = ingest.Run(t.Context(), deltatable.Appender(loc), deltaConfig(false, pointsFile(t, 2)))
	var extra *ingest.ExtraColumnsError
	require.ErrorAs(t, err, &extra)
	assert.Equal(t, []string{"id"}, extra.Columns)
	assert.Contains(t, err.Error(), "leave them out, or add them to the table as optional columns")
	assert.Len(t, logVersions(t, loc), 1)

	cfg := deltaConfig(false, pointsFile(t, 2))
	cfg.DropExtraColumns = true
	res, err := ingest.Run(t.Context(), deltatable.Appender(loc), cfg)
	require.NoError(t, err)
	assert.Equal(t, int64(2), res.Rows)

	// A table that requires a column the file lacks refuses it.
	withID := t.TempDir()
	_, err = ingest.Run(t.Context(), deltatable.Appender(withID), deltaConfig(true, pointsFile(t, 2)))
	require.NoError(t, err)
	_, err = ingest.Run(t.Context(), deltatable.Appender(withID), deltaConfig(false, noID))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `column "id" is required by the table but missing`)
	assert.Len(t, logVersions(t, withID), 1)
	assert.Len(t, deltaDataFiles(t, withID), 1)
}

// regionFile writes n points with an id and a region column ("r0".."r2").
func regionFile(t testing.TB, n int) string {
	t.Helper()
	return regionFileOf(t, n, func(i int) *string {
		if i%4 == 3 {
			return nil
		}
		v := fmt.Sprintf("r %d", i%3)
		return &v
	})
}

// regionFileOf writes n points whose region is value(i) (nil for null).
func regionFileOf(t testing.TB, n int, value func(i int) *string) string {
	t.Helper()
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "region", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "geometry", Type: arrow.BinaryTypes.Binary, Nullable: true},
		{Name: "bbox_minx", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "bbox_miny", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "bbox_maxx", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "bbox_maxy", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for i, row := range validatetest.Points(n) {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		if v := value(i); v == nil {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append(*v)
		}
		b.Field(2).(*array.BinaryBuilder).Append(row.WKB)
		for k := range 4 {
			b.Field(3 + k).(*array.Float64Builder).Append(row.BBox[k])
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	p := filepath.Join(t.TempDir(), "regions.parquet")
	out, err := os.Create(p)
	require.NoError(t, err)
	fw, err := pqarrow.NewFileWriter(sc, out, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps())
	require.NoError(t, err)
	require.NoError(t, fw.AppendKeyValueMetadata("geo", validatetest.Geo("")))
	require.NoError(t, fw.Write(rec))
	require.NoError(t, fw.Close())
	return p
}

func TestAppendPartitioned(t *testing.T) {
	loc := t.TempDir()
	in := regionFile(t, 12)
	cfg := deltaConfig(true, in)
	cfg.PartitionBy = "region"
	res, err := ingest.Run(t.Context(), deltatable.Appender(loc), cfg)
	require.NoError(t, err)
	assert.Equal(t, 4, res.DataFiles) // r 0, r 1, r 2 and null
	assert.Equal(t, inputRows(t, in), deltaRows(t, loc))

	tbl, err := delta.OpenLocal(loc)
	require.NoError(t, err)
	s, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	assert.Equal(t, []string{"region"}, s.Metadata.PartitionColumns)
	var dirs []string
	for _, f := range s.Files {
		p, err := f.DecodedPath()
		require.NoError(t, err)
		dirs = append(dirs, filepath.Dir(p))
	}
	slices.Sort(dirs)
	assert.Equal(t, []string{"region=__HIVE_DEFAULT_PARTITION__", "region=r%200", "region=r%201", "region=r%202"}, dirs)

	cfg.PartitionBy = "days(region)"
	_, err = ingest.Run(t.Context(), deltatable.Appender(loc), cfg)
	assert.ErrorIs(t, err, ingest.ErrPartitionSpec)
	cfg.PartitionBy = "id"
	_, err = ingest.Run(t.Context(), deltatable.Appender(loc), cfg)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "exists partitioned by region, not by id")
}

// TestAppendPartitionPathsAreURIReferences ingests partition values
// that need escaping: every add path in the log is a valid RFC 3986
// relative reference (java.net.URI, which Delta on Spark resolves add
// paths with, reads a bare ':' in a first segment as a scheme), no
// character outside RFC 3986's path set is left bare, and each names
// a file on disk inside the table.
func TestAppendPartitionPathsAreURIReferences(t *testing.T) {
	values := []string{"2026-06-01 00:30:00", "a:b", "50%", "a b", "x=y", "a/b", "Zürich", "x/../../../OUT", "#?", "[]"}
	loc := t.TempDir()
	in := regionFileOf(t, 2*len(values), func(i int) *string { return &values[i%len(values)] })
	cfg := deltaConfig(true, in)
	cfg.PartitionBy = "region"
	_, err := ingest.Run(t.Context(), deltatable.Appender(loc), cfg)
	require.NoError(t, err)
	assert.Equal(t, inputRows(t, in), deltaRows(t, loc))

	tbl, err := delta.OpenLocal(loc)
	require.NoError(t, err)
	s, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	require.Len(t, s.Files, len(values))
	for _, f := range s.Files {
		assert.NotContains(t, f.Path, ":", "a bare ':' in %q", f.Path)
		for _, c := range f.Path {
			assert.True(t, c < 0x80 && (strings.ContainsRune("-._~!$&'()*+,;=@/%", c) ||
				('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9')),
				"%q: %q is not an RFC 3986 path character", f.Path, c)
		}
		p, err := f.DecodedPath()
		require.NoError(t, err)
		full := filepath.Join(loc, filepath.FromSlash(p))
		assert.True(t, strings.HasPrefix(full, loc+string(filepath.Separator)), "%s is outside %s", full, loc)
		assert.FileExists(t, full)
	}
}

// TestAppendConcurrent runs ingests at once: distinct files all land,
// and the same file lands once whichever ingest wins.
func TestAppendConcurrent(t *testing.T) {
	loc := t.TempDir()
	_, err := ingest.Run(t.Context(), deltatable.Appender(loc), deltaConfig(true, pointsFile(t, 1)))
	require.NoError(t, err)
	shared := pointsFile(t, 3)
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		files := []string{shared}
		if i%2 == 0 {
			files = append(files, pointsFileWith(t, validatetest.File{Rows: validatetest.Points(10)[i+1 : i+2], Geo: validatetest.Geo(""), Extra: true}))
		}
		wg.Go(func() { _, errs[i] = ingest.Run(t.Context(), deltatable.Appender(loc), deltaConfig(false, files...)) })
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	assert.Len(t, deltaRows(t, loc), 1+3+3)
	tbl, err := delta.OpenLocal(loc)
	require.NoError(t, err)
	s, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	assert.Len(t, s.Txns, 1+1+3)
	assert.Len(t, deltaDataFiles(t, loc), len(s.Files), "unreferenced data files left behind")
}

// TestAppendS3 creates, appends to and re-runs into a Delta table on the
// loopback object store.
func TestAppendS3(t *testing.T) {
	srv := reliability.UseS3(t)
	t.Setenv("AWS_ENDPOINT_URL_S3", srv.Endpoint)
	loc := "s3://" + srv.Bucket + "/" + srv.Prefix + "/pts"
	a, b := pointsFile(t, 4), pointsFile(t, 2)
	res, err := ingest.Run(t.Context(), deltatable.Appender(loc), deltaConfig(true, a))
	require.NoError(t, err)
	assert.True(t, res.Created)
	res, err = ingest.Run(t.Context(), deltatable.Appender(loc), deltaConfig(false, a, b))
	require.NoError(t, err)
	assert.Equal(t, int64(1), res.Commit)
	assert.Equal(t, 1, res.Files)
	assert.Len(t, res.Skipped, 1)

	assert.Equal(t, inputRows(t, a, b), deltaRows(t, loc))
	tbl, err := delta.Open(t.Context(), loc)
	require.NoError(t, err)
	s, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	assert.Len(t, s.Txns, 2)
}

// TestAppendConcurrentCreate creates one table from several ingests at
// once: one creates it, the others append to it.
func TestAppendConcurrentCreate(t *testing.T) {
	loc := filepath.Join(t.TempDir(), "new")
	files := []string{pointsFile(t, 1), pointsFile(t, 2), pointsFile(t, 3)}
	results := make([]*ingest.Result, len(files))
	errs := make([]error, len(files))
	var wg sync.WaitGroup
	for i, f := range files {
		wg.Go(func() { results[i], errs[i] = ingest.Run(t.Context(), deltatable.Appender(loc), deltaConfig(true, f)) })
	}
	wg.Wait()
	created := 0
	for i := range files {
		require.NoError(t, errs[i])
		if results[i].Created {
			created++
		}
	}
	assert.Equal(t, 1, created)
	assert.Equal(t, inputRows(t, files...), deltaRows(t, loc))
	assert.Len(t, logVersions(t, loc), 3)
}

// TestAppendColumnMapping appends to a table with column mapping by
// name, made by another writer: data files, stats and the geo metadata use
// the physical names, and the rows read back by logical name.
func TestAppendColumnMapping(t *testing.T) {
	loc := t.TempDir()
	field := func(id int, name, typ string, nullable bool) string {
		return fmt.Sprintf(`{"name":%q,"type":%q,"nullable":%v,"metadata":{"delta.columnMapping.id":%d,"delta.columnMapping.physicalName":"col-%d"}}`, name, typ, nullable, id, id)
	}
	schema := `{"type":"struct","fields":[` + strings.Join([]string{field(1, "id", "long", false), field(2, "geometry", "binary", true),
		field(3, "bbox_minx", "double", true), field(4, "bbox_miny", "double", true), field(5, "bbox_maxx", "double", true),
		field(6, "bbox_maxy", "double", true)}, ",") + `]}`
	tbl, err := delta.OpenLocal(loc)
	require.NoError(t, err)
	require.NoError(t, delta.Commit(t.Context(), tbl, 0, []delta.Action{
		{Protocol: &delta.Protocol{MinReaderVersion: 2, MinWriterVersion: 5}},
		{MetaData: &delta.Metadata{ID: "cm", Format: delta.Format{Provider: "parquet"}, SchemaString: schema, PartitionColumns: []string{},
			Configuration: map[string]string{"delta.columnMapping.mode": "name", "delta.columnMapping.maxColumnId": "6", "geocompact.geometry.column": "geometry"}}},
	}))
	in := pointsFile(t, 4)
	res, err := ingest.Run(t.Context(), deltatable.Appender(loc), deltaConfig(false, in))
	require.NoError(t, err)
	assert.Equal(t, int64(1), res.Commit)
	assert.Equal(t, inputRows(t, in), deltaRows(t, loc))

	s, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	require.Len(t, s.Files, 1)
	st, err := s.Files[0].ParsedStats()
	require.NoError(t, err)
	_, ok := st.Min("col-3")
	assert.True(t, ok, "stats not keyed by physical name: %s", s.Files[0].Stats)
	p, err := s.Files[0].DecodedPath()
	require.NoError(t, err)
	assert.Contains(t, footerValue(t, filepath.Join(loc, p), "geo"), `"primary_column":"col-2"`)
}

// TestAppendGateRefuses: a Delta ingest whose files do not hold the rows
// read, or whose add path leaves the table, commits nothing and leaves
// no data file.
func TestAppendGateRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, kind string
		wrong      func([]format.GateGroup)
	}{
		{"rows", format.GateRows, func(g []format.GateGroup) { g[0].Files[0].Records-- }},
		{"place", format.GatePlace, func(g []format.GateGroup) { g[0].Files[0].Path = "../elsewhere/x.parquet" }},
		{"bare colon", format.GatePlace, func(g []format.GateGroup) { g[0].Files[0].Path = "ts=00:30/x.parquet" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			loc := t.TempDir()
			_, err := ingest.Run(t.Context(), deltatable.Appender(loc), deltaConfig(true, pointsFile(t, 3)))
			require.NoError(t, err)
			versions, files := logVersions(t, loc), deltaDataFiles(t, loc)
			deltatable.SetTamperGate(tc.wrong)
			_, err = ingest.Run(t.Context(), deltatable.Appender(loc), deltaConfig(false, pointsFile(t, 4)))
			deltatable.SetTamperGate(nil)
			ge, ok := errors.AsType[*format.GateError](err)
			require.True(t, ok, "err = %v, want a *table.GateError", err)
			assert.Equal(t, tc.kind, ge.Kind)
			assert.Equal(t, versions, logVersions(t, loc), "nothing committed")
			assert.Equal(t, files, deltaDataFiles(t, loc), "no data file left")
		})
	}
}
