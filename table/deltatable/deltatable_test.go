package deltatable_test

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/internal/testing/enginetest"
	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/table/deltatable"
	"github.com/geocompact/geocompact/table/optval"
)

// field is one column of the test schema, with its column mapping.
func field(id int, name, typ string) string {
	return fmt.Sprintf(`{"name":%q,"type":%q,"nullable":true,"metadata":{"delta.columnMapping.id":%d,"delta.columnMapping.physicalName":"col-%s"}}`, name, typ, id, name)
}

var schema = `{"type":"struct","fields":[` + field(1, "id", "long") + "," + field(2, "geometry", "binary") + "," +
	field(3, "bbox_minx", "double") + "," + field(4, "bbox_miny", "double") + "," + field(5, "bbox_maxx", "double") + "," +
	field(6, "bbox_maxy", "double") + "," + field(7, "day", "string") + `]}`

// newTable creates a Delta table partitioned by day, with column mapping
// mode ("none" or "name"), at a fresh directory.
func newTable(t *testing.T, mode string) (*delta.Table, string) {
	t.Helper()
	dir := t.TempDir()
	tbl, err := delta.OpenLocal(dir)
	require.NoError(t, err)
	proto := &delta.Protocol{MinReaderVersion: 1, MinWriterVersion: 2}
	if mode != "none" {
		proto = &delta.Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
			ReaderFeatures: []string{"columnMapping", "deletionVectors"}, WriterFeatures: []string{"columnMapping", "deletionVectors"}}
	}
	md := &delta.Metadata{ID: "t", Format: delta.Format{Provider: "parquet"}, SchemaString: schema, PartitionColumns: []string{"day"},
		Configuration: map[string]string{"delta.columnMapping.mode": mode, spatial.PropGeometryColumn: "geometry"}}
	require.NoError(t, delta.Commit(t.Context(), tbl, 0, []delta.Action{
		delta.NewCommitInfo("CREATE TABLE", nil, -1, nil), {Protocol: proto}, {MetaData: md}}))
	return tbl, dir
}

// wkbPoint is the WKB of point (x, y).
func wkbPoint(x, y float64) []byte {
	b := make([]byte, 21)
	b[0] = 1
	binary.LittleEndian.PutUint32(b[1:], 1)
	binary.LittleEndian.PutUint64(b[5:], math.Float64bits(x))
	binary.LittleEndian.PutUint64(b[13:], math.Float64bits(y))
	return b
}

// appendPoints appends files of random points, rows ids from first on,
// each file spanning the whole extent, to partition day; it returns the
// files' add actions.
func appendPoints(t *testing.T, tbl *delta.Table, day string, first int64, files, rows int) []*delta.Add {
	t.Helper()
	s, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	sc, err := s.ArrowSchema()
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(uint64(first), 7))
	mode := s.ColumnMapping()
	var adds []*delta.Add
	acts := []delta.Action{delta.NewCommitInfo("WRITE", map[string]any{"mode": "Append"}, s.Version, nil)}
	for f := range files {
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		for r := range rows {
			x, y := rng.Float64()*360-180, rng.Float64()*180-90
			b.Field(0).(*array.Int64Builder).Append(first + int64(f*rows+r))
			b.Field(1).(*array.BinaryBuilder).Append(wkbPoint(x, y))
			for i, v := range []float64{x, y, x, y} {
				b.Field(2 + i).(*array.Float64Builder).Append(v)
			}
			b.Field(6).(*array.StringBuilder).Append(day)
		}
		rec := b.NewRecordBatch()
		b.Release()
		pv := day
		w, err := tbl.NewFileWriter(t.Context(), s, fmt.Sprintf("day=%s/in-%d-%d.parquet", day, first, f),
			map[string]*string{s.Schema.Field("day").PhysicalName(mode): &pv}, nil)
		require.NoError(t, err)
		require.NoError(t, w.Write(rec))
		rec.Release()
		a, err := w.Close()
		require.NoError(t, err)
		adds = append(adds, a)
		acts = append(acts, delta.Action{Add: a})
	}
	require.NoError(t, delta.Commit(t.Context(), tbl, s.Version+1, acts))
	return adds
}

// rows returns every live row of tbl as "id|x|y|day", sorted.
func rows(t *testing.T, tbl *delta.Table) []string {
	t.Helper()
	s, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	var out []string
	require.NoError(t, tbl.Read(t.Context(), s, delta.ReadOptions{}, func(_ *delta.Add, rec arrow.RecordBatch) error {
		id := rec.Column(rec.Schema().FieldIndices("id")[0]).(*array.Int64)
		x := rec.Column(rec.Schema().FieldIndices("bbox_minx")[0]).(*array.Float64)
		y := rec.Column(rec.Schema().FieldIndices("bbox_miny")[0]).(*array.Float64)
		day := rec.Column(rec.Schema().FieldIndices("day")[0]).(*array.String)
		for i := range int(rec.NumRows()) {
			out = append(out, fmt.Sprintf("%d|%v|%v|%s", id.Value(i), x.Value(i), y.Value(i), day.Value(i)))
		}
		return nil
	}))
	slices.Sort(out)
	return out
}

// lastCommit returns the actions of tbl's latest commit.
func lastCommit(t *testing.T, tbl *delta.Table) []delta.Action {
	t.Helper()
	s, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	f, err := tbl.Store.Open(t.Context(), delta.CommitPath(s.Version))
	require.NoError(t, err)
	defer f.Close()
	b, err := io.ReadAll(f)
	require.NoError(t, err)
	acts, err := delta.ParseActions(b)
	require.NoError(t, err)
	return acts
}

func opts(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// TestOptimizeClustersAndKeepsRows rewrites a partitioned table, with and
// without column mapping, by each curve: the rows are the same, each
// partition's small files become fewer, the commit is an OPTIMIZE of
// removes and adds that change no data, and a second run finds nothing
// to do and says why.
func TestOptimizeClustersAndKeepsRows(t *testing.T) {
	for _, mode := range []string{"none", "name"} {
		for _, curve := range []string{"hilbert", "zorder"} {
			t.Run(mode+"/"+curve, func(t *testing.T) {
				tbl, dir := newTable(t, mode)
				appendPoints(t, tbl, "2026-01-01", 0, 6, 500)
				appendPoints(t, tbl, "2026-01-02", 10000, 6, 500)
				before := rows(t, tbl)
				req := engine.Request{Curve: curve, Options: opts("target-file-size-bytes", "60000", "min-input-files", "2")}
				res, err := enginetest.RewriteDelta(t.Context(), dir, req)
				require.NoError(t, err)
				require.Len(t, res.Plan.Groups, 2, res.NoopReason)
				assert.Equal(t, 12, res.RewrittenDataFilesCount)
				assert.Greater(t, res.AddedDataFilesCount, 2)
				assert.Less(t, res.AddedDataFilesCount, 12)
				assert.True(t, res.Verified)
				assert.Equal(t, before, rows(t, tbl))

				acts := lastCommit(t, tbl)
				require.NotNil(t, acts[0].CommitInfo)
				assert.Equal(t, "OPTIMIZE", acts[0].CommitInfo.Operation)
				var removes, adds int
				for _, a := range acts[1:] {
					switch {
					case a.Remove != nil:
						removes++
						assert.False(t, a.Remove.DataChange)
					case a.Add != nil:
						adds++
						assert.False(t, a.Add.DataChange)
						assert.NotEmpty(t, a.Add.Stats)
						assert.Nil(t, a.Add.DeletionVector)
					}
				}
				assert.Equal(t, 12, removes)
				assert.Equal(t, res.AddedDataFilesCount, adds)

				again, err := enginetest.RewriteDelta(t.Context(), dir, req)
				require.NoError(t, err)
				assert.Zero(t, again.RewrittenDataFilesCount)
				assert.NotEmpty(t, again.NoopReason)
			})
		}
	}
}

// TestOptimizeMaterialisesDeletionVectors rewrites files carrying
// deletion vectors: the deleted rows stay deleted, the new files carry
// none, and the result counts the vectors removed.
func TestOptimizeMaterialisesDeletionVectors(t *testing.T) {
	tbl, dir := newTable(t, "name")
	adds := appendPoints(t, tbl, "2026-01-01", 0, 5, 200)
	dv, err := delta.InlineDeletionVector(roaring64.BitmapOf(0, 7, 199))
	require.NoError(t, err)
	withDV := *adds[2]
	withDV.DeletionVector = dv
	s, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	require.NoError(t, delta.Commit(t.Context(), tbl, s.Version+1, []delta.Action{
		{Remove: &delta.Remove{Path: adds[2].Path, DataChange: true}}, {Add: &withDV}}))
	before := rows(t, tbl)
	require.Len(t, before, 997)

	res, err := enginetest.RewriteDelta(t.Context(), dir, engine.Request{Curve: "hilbert", Options: opts("rewrite-all", "true")})
	require.NoError(t, err)
	assert.Equal(t, 1, res.RemovedDeleteFilesCount)
	assert.Equal(t, before, rows(t, tbl))
	s, err = tbl.Snapshot(t.Context())
	require.NoError(t, err)
	for _, a := range s.Files {
		assert.Nil(t, a.DeletionVector, a.Path)
	}
}

// TestOptimizeSpilled sorts a group larger than its memory budget
// through the spilled sort: the same files, row for row, as the
// in-memory sort writes.
func TestOptimizeSpilled(t *testing.T) {
	var got [2][][]string
	for i, budget := range []string{"", "1MiB"} {
		tbl, dir := newTable(t, "none")
		appendPoints(t, tbl, "2026-01-01", 0, 8, 2000)
		o := opts("rewrite-all", "true", "target-file-size-bytes", "100000")
		if budget != "" {
			o["max-group-memory-bytes"] = budget
		}
		res, err := enginetest.RewriteDelta(t.Context(), dir, engine.Request{Curve: "hilbert", Options: o})
		require.NoError(t, err)
		require.Len(t, res.Plan.Groups, 1)
		require.NotNil(t, res.Plan.Groups[0].Sort)
		assert.Equal(t, budget != "", res.Plan.Groups[0].Sort.Spill)
		s, err := tbl.Snapshot(t.Context())
		require.NoError(t, err)
		for _, a := range s.Files {
			var ids []string
			require.NoError(t, tbl.ReadFile(t.Context(), s, a, delta.ReadOptions{}, func(rec arrow.RecordBatch) error {
				col := rec.Column(0).(*array.Int64)
				for r := range col.Len() {
					ids = append(ids, fmt.Sprint(col.Value(r)))
				}
				return nil
			}))
			got[i] = append(got[i], ids)
		}
	}
	slices.SortFunc(got[0], func(a, b []string) int { return slices.Compare(a, b) })
	slices.SortFunc(got[1], func(a, b []string) int { return slices.Compare(a, b) })
	assert.Greater(t, len(got[0]), 1)
	assert.Equal(t, got[0], got[1])
}

// TestOptimizeConcurrentCommits rewrites a table another writer changed
// after the rewrite read it: an append is kept (the commit lands on the
// next version), a removal of a file being replaced is a conflict that
// commits nothing and leaves no file behind.
func TestOptimizeConcurrentCommits(t *testing.T) {
	req := engine.Request{Curve: "hilbert", Options: opts("rewrite-all", "true")}
	t.Run("append", func(t *testing.T) {
		tbl, dir := newTable(t, "none")
		appendPoints(t, tbl, "2026-01-01", 0, 4, 100)
		ft, err := deltatable.Open(t.Context(), tbl, dir, table.ForWrite)
		require.NoError(t, err)
		appendPoints(t, tbl, "2026-01-01", 5000, 1, 50)
		before := rows(t, tbl)
		res, err := engine.Rewrite(t.Context(), ft, req)
		require.NoError(t, err)
		assert.Equal(t, 4, res.RewrittenDataFilesCount)
		assert.Equal(t, before, rows(t, tbl), "the concurrent append is kept")
	})
	t.Run("remove", func(t *testing.T) {
		tbl, dir := newTable(t, "none")
		adds := appendPoints(t, tbl, "2026-01-01", 0, 4, 100)
		ft, err := deltatable.Open(t.Context(), tbl, dir, table.ForWrite)
		require.NoError(t, err)
		s, err := tbl.Snapshot(t.Context())
		require.NoError(t, err)
		require.NoError(t, delta.Commit(t.Context(), tbl, s.Version+1, []delta.Action{{Remove: &delta.Remove{Path: adds[1].Path, DataChange: true}}}))
		before := rows(t, tbl)
		_, err = engine.Rewrite(t.Context(), ft, req)
		require.ErrorIs(t, err, catalogs.ErrConflict)
		after, err := tbl.Snapshot(t.Context())
		require.NoError(t, err)
		assert.Equal(t, s.Version+1, after.Version, "nothing was committed")
		assert.Equal(t, before, rows(t, tbl))
		list, err := tbl.Store.List(t.Context(), "day=2026-01-01", true)
		require.NoError(t, err)
		assert.Len(t, list, 4, "the rewrite's files were deleted")
	})
}

// TestOptimizeRefusals checks what a Delta rewrite refuses before it
// writes anything: a --where on a column the table lacks, an unknown
// option, a sort column the table lacks.
func TestOptimizeRefusals(t *testing.T) {
	tbl, dir := newTable(t, "none")
	appendPoints(t, tbl, "2026-01-01", 0, 3, 50)
	for _, c := range []struct {
		req  engine.Request
		want string
	}{
		{engine.Request{Where: "nope > 3"}, `unknown column "nope"`},
		{engine.Request{Options: opts("no-such-option", "1")}, "no-such-option"},
		{engine.Request{SortOrder: "zorder(nope, id)"}, `"nope"`},
	} {
		_, err := enginetest.RewriteDelta(t.Context(), dir, c.req)
		require.Error(t, err)
		assert.ErrorIs(t, err, optval.ErrBad)
		assert.Contains(t, err.Error(), c.want)
	}
	s, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	assert.Equal(t, int64(1), s.Version)
}

// TestOptimizeWherePartitions scopes a rewrite by partition, as Delta's
// OPTIMIZE WHERE does: only the matching partition is rewritten, and a
// predicate no partition matches rewrites nothing and says why.
func TestOptimizeWherePartitions(t *testing.T) {
	tbl, dir := newTable(t, "name")
	appendPoints(t, tbl, "2026-01-01", 0, 4, 100)
	appendPoints(t, tbl, "2026-01-02", 10000, 4, 100)
	before := rows(t, tbl)
	req := engine.Request{Curve: "hilbert", Where: "day >= '2026-01-02'", Options: opts("min-input-files", "2")}
	res, err := enginetest.RewriteDelta(t.Context(), dir, req)
	require.NoError(t, err)
	require.Len(t, res.Plan.Groups, 1)
	assert.Equal(t, "day=2026-01-02", res.Plan.Groups[0].Partition)
	assert.Equal(t, 4, res.RewrittenDataFilesCount)
	assert.Equal(t, before, rows(t, tbl))

	req.Where = "day = '2025-12-31'"
	res, err = enginetest.RewriteDelta(t.Context(), dir, req)
	require.NoError(t, err)
	assert.Zero(t, res.RewrittenDataFilesCount)
	assert.Contains(t, res.NoopReason, "no data file may hold rows matching the where filter")
}

// TestOptimizeAutoAndPartialProgress rewrites a two-partition table with
// --curve auto (each group's layout chosen from a sample of its rows) and
// with partial progress (one OPTIMIZE commit per group): the rows stay,
// the choice is recorded in the commit, and each group commits on its own
// version.
func TestOptimizeAutoAndPartialProgress(t *testing.T) {
	tbl, dir := newTable(t, "none")
	appendPoints(t, tbl, "2026-01-01", 0, 4, 300)
	appendPoints(t, tbl, "2026-01-02", 10000, 4, 300)
	before := rows(t, tbl)
	s, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)

	res, err := enginetest.RewriteDelta(t.Context(), dir, engine.Request{Curve: "auto",
		Options: opts("rewrite-all", "true", "partial-progress.enabled", "true", "partial-progress.max-commits", "2")})
	require.NoError(t, err)
	require.Len(t, res.Auto, 2)
	assert.Equal(t, 2, res.SnapshotsCommitted)
	assert.Equal(t, []int64{s.Version + 1, s.Version + 2}, res.SnapshotIDs)
	assert.Equal(t, before, rows(t, tbl))
	acts := lastCommit(t, tbl)
	require.NotNil(t, acts[0].CommitInfo)
	assert.Contains(t, acts[0].CommitInfo.OperationParameters, engine.SummaryAuto)
}

// TestRemoveStaysInsideTheTable: the cleanup of a failed rewrite deletes
// the files it wrote, by their table-relative names, and refuses a name
// outside the table, deleting nothing there.
func TestRemoveStaysInsideTheTable(t *testing.T) {
	tbl, dir := newTable(t, "none")
	appendPoints(t, tbl, "2026-01-01", 0, 1, 10)
	ft, err := deltatable.Open(t.Context(), tbl, dir, table.ForWrite)
	require.NoError(t, err)
	written := filepath.Join(dir, "day=2026-01-01", "part-00000-x y%41.parquet")
	outside := filepath.Join(t.TempDir(), "keep.parquet")
	for _, p := range []string{written, outside} {
		require.NoError(t, os.WriteFile(p, []byte("x"), 0o644))
	}
	err = ft.Format.Remove(t.Context(), []string{"day=2026-01-01/part-00000-x y%41.parquet", filepath.ToSlash(outside)})
	require.ErrorContains(t, err, "outside the table")
	assert.NoFileExists(t, written)
	assert.FileExists(t, outside)
}
