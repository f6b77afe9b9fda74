package main

import (
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/internal/localpath"
	"github.com/geocompact/geocompact/internal/testing/reliability"
	"github.com/geocompact/geocompact/validate/validatetest"
)

// writeRegionFile writes a GeoParquet file under dir with one point row
// per value of the string column region (nil writes a null), ids from
// firstID on.
func writeRegionFile(t testing.TB, dir, name string, firstID int64, regions []*string) string {
	t.Helper()
	f64 := arrow.PrimitiveTypes.Float64
	sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "region", Type: arrow.BinaryTypes.String, Nullable: true}, {Name: "geometry", Type: arrow.BinaryTypes.Binary, Nullable: true},
		{Name: "bbox_minx", Type: f64, Nullable: true}, {Name: "bbox_miny", Type: f64, Nullable: true},
		{Name: "bbox_maxx", Type: f64, Nullable: true}, {Name: "bbox_maxy", Type: f64, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for i, r := range regions {
		x, y := float64(i%50)-25, float64(i%17)-8
		b.Field(0).(*array.Int64Builder).Append(firstID + int64(i))
		if r == nil {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append(*r)
		}
		b.Field(2).(*array.BinaryBuilder).Append(validatetest.Point(x, y))
		for k, v := range []float64{x, y, x, y} {
			b.Field(3 + k).(*array.Float64Builder).Append(v)
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	p := filepath.Join(dir, name+".parquet")
	out, err := os.Create(p)
	require.NoError(t, err)
	fw, err := pqarrow.NewFileWriter(sc, out, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps())
	require.NoError(t, err)
	require.NoError(t, fw.AppendKeyValueMetadata("geo", validatetest.Geo("")))
	require.NoError(t, fw.Write(rec))
	require.NoError(t, fw.Close())
	return p
}

func strp(s string) *string { return &s }

// filesOutside lists the files under root that lie neither under the
// table directory dir nor are the catalog database's.
func filesOutside(t testing.TB, root, dir string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		if strings.HasPrefix(p, dir+string(filepath.Separator)) || strings.HasPrefix(filepath.Base(p), "catalog.db") {
			return nil
		}
		out = append(out, p)
		return nil
	}))
	slices.Sort(out)
	return out
}

// tableRegions reads the region column of every row of tbl, by id.
func tableRegions(t testing.TB, tbl *table.Table) map[int64]*string {
	t.Helper()
	scan := tbl.Scan(table.WithSelectedFields("id", "region"))
	_, batches, err := scan.ToArrowRecords(t.Context())
	require.NoError(t, err)
	out := map[int64]*string{}
	for rec, err := range batches {
		require.NoError(t, err)
		ids := rec.Column(int(rec.Schema().FieldIndices("id")[0])).(*array.Int64)
		regs := rec.Column(int(rec.Schema().FieldIndices("region")[0])).(*array.String)
		for i := range int(rec.NumRows()) {
			if regs.IsNull(i) {
				out[ids.Value(i)] = nil
			} else {
				out[ids.Value(i)] = strp(regs.Value(i))
			}
		}
		rec.Release()
	}
	return out
}

// TestIngestPartitionValueStaysInTable ingests a batch partitioned by a
// column holding "x/../../../../../OUT2": its data file must land in the
// table's own data directory, named by the escaped value, and read back.
func TestIngestPartitionValueStaysInTable(t *testing.T) {
	root := t.TempDir()
	wh := filepath.Join(root, "wh")
	evil := "x/../../../../../OUT2"
	src := writeRegionFile(t, t.TempDir(), "in", 0, []*string{strp("x"), strp(evil), strp("a/b")})
	r := runCLI(t, wh, false, "ingest", "--table", "gis.p", "--create", "--partition-by", "region", src)
	require.Equal(t, exitOK, r.Code, "%s\n%s", r.Stdout, r.Stderr)

	tbl := ingestLoadTable(t, wh, "gis.p")
	dir := reliability.Normalize(tbl.Location())
	assert.Empty(t, filesOutside(t, root, dir))
	assert.DirExists(t, filepath.Join(dir, "data", "region=x%2F..%2F..%2F..%2F..%2F..%2FOUT2"))
	assert.DirExists(t, filepath.Join(dir, "data", "region=a%2Fb"))
	missing, err := reliability.MissingFiles(t.Context(), tbl)
	require.NoError(t, err)
	assert.Empty(t, missing)
	assert.Equal(t, map[int64]*string{0: strp("x"), 1: strp(evil), 2: strp("a/b")}, tableRegions(t, tbl))
}

// TestOrphansKeepEscapedPartitionFiles runs orphans on tables whose data
// files sit in partition directories named by escaped values, either
// literally (as Iceberg Java and this version write them) or at the
// decoded name (as earlier versions wrote them): reads find every file,
// and orphans deletes a planted orphan and none of them.
func TestOrphansKeepEscapedPartitionFiles(t *testing.T) {
	values := []*string{strp("Zürich"), strp("a/b"), strp("%"), strp("a b"), strp("x")}
	for _, legacy := range []bool{false, true} {
		name := map[bool]string{false: "literal", true: "decoded"}[legacy]
		t.Run(name, func(t *testing.T) {
			wh := t.TempDir()
			src := writeRegionFile(t, t.TempDir(), "in", 0, values)
			r := runCLI(t, wh, false, "ingest", "--table", "gis.p", "--create", "--partition-by", "region", src)
			require.Equal(t, exitOK, r.Code, "%s\n%s", r.Stdout, r.Stderr)
			tbl := ingestLoadTable(t, wh, "gis.p")
			data := filepath.Join(reliability.Normalize(tbl.Location()), "data")
			if legacy {
				require.NoError(t, os.Rename(filepath.Join(data, "region=Z%C3%BCrich"), filepath.Join(data, "region=Zürich")))
				require.NoError(t, os.MkdirAll(filepath.Join(data, "region=a"), 0o755))
				require.NoError(t, os.Rename(filepath.Join(data, "region=a%2Fb"), filepath.Join(data, "region=a", "b")))
				require.NoError(t, os.Rename(filepath.Join(data, "region=%25"), filepath.Join(data, "region=%")))
			}
			orphan := filepath.Join(data, "region=x", "orphan.parquet")
			require.NoError(t, os.WriteFile(orphan, []byte("x"), 0o644))
			want := map[int64]*string{}
			for i, v := range values {
				want[int64(i)] = v
			}
			assert.Equal(t, want, tableRegions(t, tbl))

			r = runCLI(t, wh, false, "orphans", "--table", "gis.p", "--older-than", "0s", "--force")
			require.Equal(t, exitOK, r.Code, "%s\n%s", r.Stdout, r.Stderr)
			assert.NoFileExists(t, orphan)
			tbl = ingestLoadTable(t, wh, "gis.p")
			missing, err := reliability.MissingFiles(t.Context(), tbl)
			require.NoError(t, err)
			assert.Empty(t, missing)
			assert.Equal(t, want, tableRegions(t, tbl))
		})
	}
}

// partitionValueCases are partition values that mean something in a
// path or a URI, with the name of each case.
func partitionValueCases() []struct {
	name  string
	value *string
} {
	return []struct {
		name  string
		value *string
	}{
		{"long", strp(strings.Repeat("l", 300))},
		{"slash", strp("a/b")},
		{"dotdot-out", strp("x/../../../OUT")},
		{"dotdot", strp("..")},
		{"percent", strp("%")},
		{"escaped-slash", strp("%2F")},
		{"colon", strp(":")},
		{"plus", strp("+")},
		{"space", strp("a b")},
		{"unicode", strp("Zürich")},
		{"empty", strp("")},
		{"null", nil},
	}
}

// TestPartitionValuesStayInTable ingests, appends and rewrites (binpack,
// then Hilbert) a table partitioned by each value of
// partitionValueCases, beside rows of an ordinary value. After each
// command either it was refused, naming the value, with no data file
// written, or every file under the warehouse is in the table's
// directory, every file the table references exists, the rows are
// those ingested and each reads back its partition value exactly.
func TestPartitionValuesStayInTable(t *testing.T) {
	for _, tc := range partitionValueCases() {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			wh := filepath.Join(root, "wh")
			in := t.TempDir()
			vals := []*string{tc.value, tc.value, strp("x"), tc.value}
			want := map[int64]*string{}
			for i := range 2 * len(vals) {
				want[int64(i)] = vals[i%len(vals)]
			}
			first := writeRegionFile(t, in, "first", 0, vals)
			second := writeRegionFile(t, in, "second", int64(len(vals)), vals)

			r := runCLI(t, wh, false, "ingest", "--table", "gis.p", "--create", "--partition-by", "region", first)
			if r.Code != exitOK {
				require.NotNil(t, tc.value, "a null partition refused:\n%s", r.Stderr)
				assert.Contains(t, r.Stderr, *tc.value, "the refusal does not name the value")
				assert.Empty(t, parquetFiles(t, wh), "a refused ingest wrote data files")
				return
			}
			r = runCLI(t, wh, false, "ingest", "--table", "gis.p", second)
			require.Equal(t, exitOK, r.Code, "append:\n%s\n%s", r.Stdout, r.Stderr)
			digest := checkPartitionedTable(t, root, wh, want, reliability.Digest{})
			for _, args := range [][]string{
				{"--strategy", "binpack", "--option", "rewrite-all"},
				{"--curve", "hilbert", "--option", "rewrite-all"},
			} {
				r = runCLI(t, wh, false, append([]string{"rewrite", "--table", "gis.p"}, args...)...)
				require.Equal(t, exitOK, r.Code, "rewrite %v:\n%s\n%s", args, r.Stdout, r.Stderr)
				checkPartitionedTable(t, root, wh, want, digest)
			}
		})
	}
}

// checkPartitionedTable checks the table gis.p of wh: no file under root
// outside its directory, no referenced file missing, its regions by id
// as want, and its digest as digest (unless zero); it returns the digest.
func checkPartitionedTable(t *testing.T, root, wh string, want map[int64]*string, digest reliability.Digest) reliability.Digest {
	t.Helper()
	tbl := ingestLoadTable(t, wh, "gis.p")
	dir, ok := localpath.Locate(tbl.Location())
	require.True(t, ok, tbl.Location())
	dir = filepath.Clean(dir)
	require.True(t, strings.HasPrefix(dir, wh+string(filepath.Separator)), "table location %s", tbl.Location())
	assert.Empty(t, filesOutside(t, root, dir), "files outside the table directory %s", dir)
	missing, err := reliability.MissingFiles(t.Context(), tbl)
	require.NoError(t, err)
	assert.Empty(t, missing, "referenced files missing")
	assert.Equal(t, want, tableRegions(t, tbl))
	got, err := reliability.TableDigest(t.Context(), tbl, 0)
	require.NoError(t, err)
	if digest.Rows != 0 {
		assert.True(t, digest.Equal(got), "digest %v, want %v", got, digest)
	}
	return got
}

// parquetFiles lists the Parquet files under dir.
func parquetFiles(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".parquet") {
			out = append(out, p)
		}
		return nil
	})
	if !os.IsNotExist(err) {
		require.NoError(t, err)
	}
	return out
}

// TestPartitionValuesInOddWarehouse writes escaped partition values into
// a warehouse whose own path holds a space, a percent sign and a
// non-ASCII letter (which iceberg-go percent-escapes in the data file
// locations it forms): the files land in the table directory and read
// back.
func TestPartitionValuesInOddWarehouse(t *testing.T) {
	root := t.TempDir()
	wh := filepath.Join(root, "my dir %41 ü")
	vals := []*string{strp("a/b"), strp("Zürich"), strp("%"), nil}
	want := map[int64]*string{}
	for i, v := range vals {
		want[int64(i)] = v
		want[int64(i+len(vals))] = v
	}
	in := t.TempDir()
	r := runCLI(t, wh, false, "ingest", "--table", "gis.p", "--create", "--partition-by", "region", writeRegionFile(t, in, "a", 0, vals))
	require.Equal(t, exitOK, r.Code, "%s\n%s", r.Stdout, r.Stderr)
	r = runCLI(t, wh, false, "ingest", "--table", "gis.p", writeRegionFile(t, in, "b", int64(len(vals)), vals))
	require.Equal(t, exitOK, r.Code, "%s\n%s", r.Stdout, r.Stderr)
	digest := checkPartitionedTable(t, root, wh, want, reliability.Digest{})
	r = runCLI(t, wh, false, "rewrite", "--table", "gis.p", "--strategy", "binpack", "--option", "rewrite-all")
	require.Equal(t, exitOK, r.Code, "%s\n%s", r.Stdout, r.Stderr)
	checkPartitionedTable(t, root, wh, want, digest)
	r = runCLI(t, wh, false, "orphans", "--table", "gis.p", "--older-than", "0s", "--force")
	require.Equal(t, exitOK, r.Code, "%s\n%s", r.Stdout, r.Stderr)
	checkPartitionedTable(t, root, wh, want, digest)
}

// TestPartitionValuesStayInTableS3 ingests and rewrites each value of
// partitionValueCases into a warehouse on S3 (versitygw with its posix
// backend): every data file's key is the table's data directory, the
// partition directory with the value escaped as one name and the file
// name, taken literally (no decoding, no ".." resolved); every object the
// server stores lies under the table's location, every referenced file
// exists and the values read back.
func TestPartitionValuesStayInTableS3(t *testing.T) {
	s3 := reliability.UseS3(t)
	cfg := s3.WriteConfig(t, t.TempDir(), false)
	var tables []string // the directories of the tables made so far, refused ones included
	for i, tc := range partitionValueCases() {
		t.Run(tc.name, func(t *testing.T) {
			short := "pv" + strings.Repeat("x", i)
			name := "lake." + short
			if srv := s3.Server(); srv != nil {
				tables = append(tables, filepath.Join(srv.Root, s3.Bucket, filepath.FromSlash(s3.Prefix), "lake.db", short))
			}
			vals := []*string{tc.value, strp("x"), tc.value}
			want := map[int64]*string{0: tc.value, 1: strp("x"), 2: tc.value}
			src := writeRegionFile(t, t.TempDir(), "in", 0, vals)
			r := runCLI(t, "", false, s3Args(cfg, "ingest", "--table", name, "--create", "--partition-by", "region", src)...)
			if r.Code != exitOK {
				require.NotNil(t, tc.value, "a null partition refused:\n%s", r.Stderr)
				assert.Contains(t, r.Stderr, *tc.value, "the refusal does not name the value")
				return
			}
			r = runCLI(t, "", false, s3Args(cfg, "rewrite", "--table", name, "--strategy", "binpack", "--option", "rewrite-all")...)
			require.Equal(t, exitOK, r.Code, "rewrite:\n%s\n%s", r.Stdout, r.Stderr)
			tbl := loadTable(t, openConfigCatalog(t, cfg, reliability.CatalogName), name)
			loc := tbl.Location()
			require.True(t, strings.HasPrefix(loc, s3.Warehouse()+"/"), loc)
			missing, err := reliability.MissingFiles(t.Context(), tbl)
			require.NoError(t, err)
			assert.Empty(t, missing)
			assert.Equal(t, want, tableRegions(t, tbl))
			refs, err := reliability.ReferencedFiles(t.Context(), tbl)
			require.NoError(t, err)
			seg := "region=null"
			if tc.value != nil {
				seg = "region=" + url.QueryEscape(*tc.value)
			}
			var inPartition int
			for p := range refs {
				if strings.HasSuffix(p, ".parquet") && strings.HasPrefix(p, loc+"/data/"+seg+"/") {
					assert.NotContains(t, strings.TrimPrefix(p, loc+"/data/"+seg+"/"), "/", p)
					inPartition++
				}
			}
			assert.Positive(t, inPartition, "no data file in %s/data/%s", loc, seg)
			if srv := s3.Server(); srv != nil {
				bucket := filepath.Join(srv.Root, s3.Bucket)
				require.Equal(t, tables[len(tables)-1], filepath.Join(bucket, filepath.FromSlash(strings.TrimPrefix(loc, "s3://"+s3.Bucket+"/"))))
				var outside []string
				for _, p := range filesOutside(t, bucket, tables[0]) {
					if !slices.ContainsFunc(tables, func(dir string) bool { return strings.HasPrefix(p, dir+string(filepath.Separator)) }) {
						outside = append(outside, p)
					}
				}
				assert.Empty(t, outside, "objects outside the tables")
			}
		})
	}
}
