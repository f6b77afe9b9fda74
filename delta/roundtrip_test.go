package delta

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/internal/testing/testenv"
)

const testSchema = `{"type":"struct","fields":[
 {"name":"id","type":"long","nullable":true,"metadata":{"delta.columnMapping.id":1,"delta.columnMapping.physicalName":"col-id"}},
 {"name":"name","type":"string","nullable":true,"metadata":{"delta.columnMapping.id":2,"delta.columnMapping.physicalName":"col-name"}},
 {"name":"bbox","type":{"type":"struct","fields":[
   {"name":"xmin","type":"double","nullable":true,"metadata":{"delta.columnMapping.id":4,"delta.columnMapping.physicalName":"col-xmin"}},
   {"name":"ymin","type":"double","nullable":true,"metadata":{"delta.columnMapping.id":5,"delta.columnMapping.physicalName":"col-ymin"}}]},
  "nullable":true,"metadata":{"delta.columnMapping.id":3,"delta.columnMapping.physicalName":"col-bbox"}},
 {"name":"part","type":"integer","nullable":true,"metadata":{"delta.columnMapping.id":6,"delta.columnMapping.physicalName":"col-part"}}]}`

// newTestTable creates a partitioned table (by part) with column mapping in
// mode ("none" or "name") and the given extra properties.
func newTestTable(t testing.TB, mode string, props map[string]string) *Table {
	t.Helper()
	tbl, err := OpenLocal(t.TempDir())
	require.NoError(t, err)
	return createTestTable(t, tbl, mode, props)
}

// createTestTable commits version 0 of newTestTable's table into tbl.
func createTestTable(t testing.TB, tbl *Table, mode string, props map[string]string) *Table {
	t.Helper()
	conf := map[string]string{"delta.columnMapping.mode": mode}
	for k, v := range props {
		conf[k] = v
	}
	proto := &Protocol{MinReaderVersion: 1, MinWriterVersion: 2}
	if mode != "none" {
		proto = &Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
			ReaderFeatures: []string{"columnMapping", "deletionVectors"},
			WriterFeatures: []string{"columnMapping", "deletionVectors"}}
	}
	md := &Metadata{ID: "test", Format: Format{Provider: "parquet"}, SchemaString: testSchema,
		PartitionColumns: []string{"part"}, Configuration: conf}
	require.NoError(t, Commit(t.Context(), tbl, 0, []Action{
		NewCommitInfo("CREATE TABLE", nil, -1, nil), {Protocol: proto}, {MetaData: md}}))
	return tbl
}

// writeFile writes rows id in [from, to) of partition part as one data file.
func writeFile(t testing.TB, tbl *Table, s *Snapshot, part int, from, to int64) *Add {
	t.Helper()
	return writeNamedFile(t, tbl, s, part, fmt.Sprintf("part=%d/f-%d-%d.parquet", part, from, to), from, to)
}

// writeNamedFile is writeFile with the data file's table-relative name.
func writeNamedFile(t testing.TB, tbl *Table, s *Snapshot, part int, name string, from, to int64) *Add {
	t.Helper()
	schema, err := s.ArrowSchema()
	require.NoError(t, err)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for id := from; id < to; id++ {
		b.Field(0).(*array.Int64Builder).Append(id)
		if id%5 == 0 {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("n%03d", id))
		}
		sb := b.Field(2).(*array.StructBuilder)
		sb.Append(true)
		sb.FieldBuilder(0).(*array.Float64Builder).Append(float64(id))
		sb.FieldBuilder(1).(*array.Float64Builder).Append(-float64(id))
		b.Field(3).(*array.Int32Builder).Append(int32(part))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	mode := s.ColumnMapping()
	pv := fmt.Sprint(part)
	partKey := s.Schema.Field("part").PhysicalName(mode)
	w, err := tbl.NewFileWriter(t.Context(), s, name, map[string]*string{partKey: &pv}, nil)
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	add, err := w.Close()
	require.NoError(t, err)
	return add
}

func snap(t testing.TB, tbl *Table) *Snapshot {
	t.Helper()
	s, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	return s
}

func appendFiles(t testing.TB, tbl *Table, adds ...*Add) int64 {
	t.Helper()
	s := snap(t, tbl)
	acts := []Action{NewCommitInfo("WRITE", map[string]any{"mode": "Append"}, s.Version, nil)}
	for _, a := range adds {
		acts = append(acts, Action{Add: a})
	}
	require.NoError(t, Commit(t.Context(), tbl, s.Version+1, acts))
	return s.Version + 1
}

func ids(t testing.TB, tbl *Table) []string {
	t.Helper()
	return readRows(t, tbl, "id", "part")
}

func idRange(part int, from, to int64) []string {
	var out []string
	for id := from; id < to; id++ {
		out = append(out, fmt.Sprintf("%d|%d", id, part))
	}
	return out
}

func sorted(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	sort.Strings(out)
	return out
}

func TestRoundTripColumnMappingAndStats(t *testing.T) {
	for _, mode := range []string{"none", "name"} {
		t.Run(mode, func(t *testing.T) {
			tbl := newTestTable(t, mode, nil)
			s := snap(t, tbl)
			a1 := writeFile(t, tbl, s, 1, 0, 10)
			a2 := writeFile(t, tbl, s, 2, 10, 25)
			appendFiles(t, tbl, a1, a2)
			assert.Equal(t, sorted(idRange(1, 0, 10), idRange(2, 10, 25)), ids(t, tbl))

			s = snap(t, tbl)
			m := s.ColumnMapping()
			st, err := s.Files[1].ParsedStats()
			require.NoError(t, err)
			assert.Equal(t, int64(15), st.NumRecords)
			idKey := s.Schema.Field("id").PhysicalName(m)
			bbox := s.Schema.Field("bbox")
			xmin := bbox.Type.(*StructType).Field("xmin").PhysicalName(m)
			lo, _ := st.Min(idKey)
			hi, _ := st.Max(idKey)
			assert.Equal(t, json.Number("10"), lo)
			assert.Equal(t, json.Number("24"), hi)
			x, ok := st.Max(bbox.PhysicalName(m), xmin)
			require.True(t, ok)
			f, _ := Float(x)
			assert.Equal(t, 24.0, f)
			nulls, ok := st.Nulls(s.Schema.Field("name").PhysicalName(m))
			require.True(t, ok)
			assert.Equal(t, int64(3), nulls, "ids 10, 15, 20 have no name")
			_, partInStats := st.NullCount[s.Schema.Field("part").PhysicalName(m)]
			assert.False(t, partInStats, "partition columns have no stats")
			if mode == "name" {
				assert.Contains(t, s.Files[0].Stats, "col-id")
			}
		})
	}
}

func TestStatsColumnsSelection(t *testing.T) {
	for _, tc := range []struct {
		props map[string]string
		want  []string
	}{
		{map[string]string{"delta.dataSkippingNumIndexedCols": "1"}, []string{"id"}},
		{map[string]string{"delta.dataSkippingNumIndexedCols": "3"}, []string{"bbox", "id", "name"}},
		{map[string]string{"delta.dataSkippingStatsColumns": "bbox.ymin"}, []string{"bbox"}},
	} {
		tbl := newTestTable(t, "none", tc.props)
		s := snap(t, tbl)
		st, err := writeFile(t, tbl, s, 1, 0, 3).ParsedStats()
		require.NoError(t, err)
		var got []string
		for k := range st.NullCount {
			got = append(got, k)
		}
		sort.Strings(got)
		assert.Equal(t, tc.want, got, "%v", tc.props)
	}
}

func TestDeletionVectorInlineSpecExample(t *testing.T) {
	// The protocol's inline example encodes rows 3, 4, 7, 11, 18, 29.
	dv := &DeletionVector{StorageType: "i", PathOrInlineDv: "wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L",
		SizeInBytes: 40, Cardinality: 6}
	bm, err := dv.Load(t.Context(), nil)
	require.NoError(t, err)
	assert.Equal(t, []uint64{3, 4, 7, 11, 18, 29}, bm.ToArray())

	again, err := InlineDeletionVector(bm)
	require.NoError(t, err)
	bm2, err := again.Load(t.Context(), nil)
	require.NoError(t, err)
	assert.True(t, bm.Equals(bm2))

	_, err = decodeBitmap([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	assert.ErrorContains(t, err, "magic")
}

func TestDeletionVectorFilePath(t *testing.T) {
	// The protocol's example: prefix "ab", UUID d2c639aa-8816-431a-aaf6-d3fe2512ff61.
	dv := &DeletionVector{StorageType: "u", PathOrInlineDv: "ab^-aqEH.-t@S}K{vb[*k^"}
	p, err := dv.FilePath()
	require.NoError(t, err)
	assert.Equal(t, "ab/deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin", p)
	off := int32(4)
	dv.Offset = &off
	assert.Equal(t, "uab^-aqEH.-t@S}K{vb[*k^@4", dv.UniqueID())
}

func TestReadAppliesInlineDeletionVector(t *testing.T) {
	tbl := newTestTable(t, "name", nil)
	s := snap(t, tbl)
	a := writeFile(t, tbl, s, 1, 0, 20)
	appendFiles(t, tbl, a)
	bm := roaring64.BitmapOf(0, 5, 19)
	dv, err := InlineDeletionVector(bm)
	require.NoError(t, err)
	withDV := *a
	withDV.DeletionVector = dv
	s = snap(t, tbl)
	require.NoError(t, Commit(t.Context(), tbl, s.Version+1, []Action{
		{Remove: &Remove{Path: a.Path, DataChange: true}}, {Add: &withDV}}))
	got := ids(t, tbl)
	assert.Len(t, got, 17)
	assert.NotContains(t, got, "5|1")
	assert.NotContains(t, got, "19|1")
	assert.Contains(t, got, "18|1")
}

func TestCommitPutIfAbsent(t *testing.T) {
	tbl := newTestTable(t, "none", nil)
	err := Commit(t.Context(), tbl, 0, []Action{NewCommitInfo("WRITE", nil, -1, nil)})
	var ve *VersionExistsError
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, int64(0), ve.Version)
	s := snap(t, tbl)
	assert.Equal(t, "CREATE TABLE", s.CommitInfo.Operation, "the losing commit wrote nothing")
	require.Error(t, Commit(t.Context(), tbl, 1, []Action{{}}), "an empty action is refused")
}

// optimizePlan rewrites every live file into one and returns the actions.
func optimizePlan(t testing.TB, tbl *Table) (*Snapshot, []Action) {
	t.Helper()
	s := snap(t, tbl)
	schema, err := s.ArrowSchema()
	require.NoError(t, err)
	pv := "1"
	w, err := tbl.NewFileWriter(t.Context(), s, "part=1/optimized.parquet",
		map[string]*string{s.Schema.Field("part").PhysicalName(s.ColumnMapping()): &pv}, nil)
	require.NoError(t, err)
	err = tbl.Read(t.Context(), s, ReadOptions{}, func(_ *Add, rec arrow.RecordBatch) error {
		require.True(t, schema.Equal(rec.Schema()))
		return w.Write(rec)
	})
	require.NoError(t, err)
	add, err := w.Close()
	require.NoError(t, err)
	acts := append([]Action{NewCommitInfo("OPTIMIZE", map[string]any{"zOrderBy": `["bbox"]`}, s.Version, nil)},
		RewriteActions(s.Files, []*Add{add}, time.Now())...)
	return s, acts
}

func TestCommitRewriteConflicts(t *testing.T) {
	setup := func(t *testing.T) (*Table, *Add) {
		tbl := newTestTable(t, "name", nil)
		s := snap(t, tbl)
		a := writeFile(t, tbl, s, 1, 0, 10)
		appendFiles(t, tbl, a, writeFile(t, tbl, s, 1, 10, 20))
		return tbl, a
	}
	t.Run("concurrent append is kept", func(t *testing.T) {
		tbl, _ := setup(t)
		s, acts := optimizePlan(t, tbl)
		appendFiles(t, tbl, writeFile(t, tbl, s, 1, 20, 25))
		v, err := CommitRewrite(t.Context(), tbl, s.Version, acts, 3)
		require.NoError(t, err)
		assert.Equal(t, s.Version+2, v)
		after := snap(t, tbl)
		assert.Len(t, after.Files, 2, "the optimized file and the appended one")
		assert.Equal(t, sorted(idRange(1, 0, 25)), ids(t, tbl))
		for _, a := range after.Files {
			if strings.Contains(a.Path, "optimized") {
				assert.False(t, a.DataChange)
			}
		}
		assert.Equal(t, "OPTIMIZE", after.CommitInfo.Operation)
	})
	t.Run("concurrent remove conflicts", func(t *testing.T) {
		tbl, a := setup(t)
		s, acts := optimizePlan(t, tbl)
		require.NoError(t, Commit(t.Context(), tbl, s.Version+1, []Action{{Remove: &Remove{Path: a.Path, DataChange: true}}}))
		_, err := CommitRewrite(t.Context(), tbl, s.Version, acts, 3)
		var ce *ConflictError
		require.ErrorAs(t, err, &ce)
		assert.Contains(t, ce.Reason, "removed")
		assert.Equal(t, snap(t, tbl).Version, s.Version+1, "nothing was committed")
	})
	t.Run("concurrent deletion vector conflicts", func(t *testing.T) {
		tbl, a := setup(t)
		s, acts := optimizePlan(t, tbl)
		dv, err := InlineDeletionVector(roaring64.BitmapOf(1))
		require.NoError(t, err)
		withDV := *a
		withDV.DeletionVector = dv
		require.NoError(t, Commit(t.Context(), tbl, s.Version+1, []Action{
			{Remove: &Remove{Path: a.Path, DataChange: true}}, {Add: &withDV}}))
		_, err = CommitRewrite(t.Context(), tbl, s.Version, acts, 3)
		var ce *ConflictError
		require.ErrorAs(t, err, &ce)
	})
}

func TestCheckpointRoundTrip(t *testing.T) {
	tbl := newTestTable(t, "name", map[string]string{"delta.checkpointInterval": "3"})
	var want []string
	for i := int64(0); i < 3; i++ {
		s := snap(t, tbl)
		v := appendFiles(t, tbl, writeFile(t, tbl, s, 1, i*10, i*10+10))
		want = append(want, idRange(1, i*10, i*10+10)...)
		wrote, err := tbl.MaybeCheckpoint(t.Context(), v)
		require.NoError(t, err)
		assert.Equal(t, v == 3, wrote, "version %d", v)
	}
	// A tombstone and a transaction survive the checkpoint.
	s0 := snap(t, tbl)
	ts := time.Now().UnixMilli()
	require.NoError(t, Commit(t.Context(), tbl, 4, []Action{
		{Remove: &Remove{Path: s0.Files[0].Path, DeletionTimestamp: &ts, DataChange: true}},
		{Txn: &Txn{AppID: "ingest", Version: 7}}}))
	require.NoError(t, Commit(t.Context(), tbl, 5, []Action{NewCommitInfo("WRITE", nil, 4, nil)}))
	require.NoError(t, Commit(t.Context(), tbl, 6, []Action{NewCommitInfo("WRITE", nil, 5, nil)}))
	wrote, err := tbl.MaybeCheckpoint(t.Context(), 6)
	require.NoError(t, err)
	require.True(t, wrote)
	fromJSON := snap(t, tbl)

	// Without the JSON commits the checkpoint alone must give the same state.
	for v := int64(0); v <= 6; v++ {
		require.NoError(t, os.Remove(filepath.Join(tbl.Store.(*LocalStorage).Root, filepath.FromSlash(CommitPath(v)))))
	}
	s := snap(t, tbl)
	assert.Equal(t, int64(6), s.CheckpointVersion)
	assert.Equal(t, filePaths(fromJSON), filePaths(s))
	assert.Len(t, s.Tombstones, 1)
	assert.Equal(t, map[string]int64{"ingest": 7}, s.Txns)
	assert.Equal(t, fromJSON.Schema, s.Schema)
	assert.Equal(t, sorted(want[10:]), sorted(ids(t, tbl)))
	lc := readLastCheckpoint(t.Context(), tbl.Store)
	require.NotNil(t, lc)
	assert.Equal(t, int64(6), lc.Version)
}

func TestVacuum(t *testing.T) {
	tbl := newTestTable(t, "none", nil)
	s := snap(t, tbl)
	appendFiles(t, tbl, writeFile(t, tbl, s, 1, 0, 10), writeFile(t, tbl, s, 1, 10, 20))
	_, acts := optimizePlan(t, tbl)
	_, err := CommitRewrite(t.Context(), tbl, snap(t, tbl).Version, acts, 1)
	require.NoError(t, err)
	root := tbl.Store.(*LocalStorage).Root
	require.NoError(t, os.WriteFile(filepath.Join(root, "part=1", "orphan.parquet"), []byte("x"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "_staging"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "_staging", "keep.parquet"), []byte("x"), 0o644))

	_, err = tbl.PlanVacuum(t.Context(), VacuumConfig{Retain: time.Hour})
	var re *RetentionError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, defaultDeletedFileRetention, re.Floor)
	_, err = tbl.PlanVacuum(t.Context(), VacuumConfig{})
	require.ErrorAs(t, err, &re, "a zero retention keeps nothing, so it needs Force")
	assert.Zero(t, re.Retain)

	// Now: the removed files are inside the window and everything is young.
	plan, err := tbl.PlanVacuum(t.Context(), VacuumConfig{Retain: TableRetention})
	require.NoError(t, err)
	assert.Empty(t, plan.Files)

	later := time.Now().Add(8 * 24 * time.Hour)
	plan, err = tbl.PlanVacuum(t.Context(), VacuumConfig{Retain: TableRetention, Now: later})
	require.NoError(t, err)
	var names []string
	for _, f := range plan.Files {
		names = append(names, f.Path)
	}
	sort.Strings(names)
	assert.Equal(t, []string{"part=1/f-0-10.parquet", "part=1/f-10-20.parquet", "part=1/orphan.parquet"}, names)
	assert.Positive(t, plan.Bytes)
	n, err := plan.Execute(t.Context(), tbl)
	require.NoError(t, err)
	assert.Equal(t, 3, n)
	assert.Equal(t, sorted(idRange(1, 0, 20)), ids(t, tbl), "the table reads the same after vacuum")
	assert.FileExists(t, filepath.Join(root, "_staging", "keep.parquet"))
}

func TestVacuumGolden(t *testing.T) {
	// snapshot-vacuumed was vacuumed with retention 0: every data file left
	// is live, so a forced vacuum finds nothing.
	dir := copyTable(t, filepath.Join(testenv.DeltaGolden(t), "snapshot-vacuumed"))
	tbl, err := OpenLocal(dir)
	require.NoError(t, err)
	plan, err := tbl.PlanVacuum(t.Context(), VacuumConfig{Retain: time.Millisecond, Force: true,
		Now: time.Now().Add(time.Hour)})
	require.NoError(t, err)
	assert.Empty(t, plan.Files)
}

func TestVacuumProtocolCheckRefusesUnknownWriterFeature(t *testing.T) {
	tbl := newTestTable(t, "none", nil)
	s := snap(t, tbl)
	p := &Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{"vacuumProtocolCheck"},
		WriterFeatures: []string{"vacuumProtocolCheck", "rowTracking"}}
	require.NoError(t, Commit(context.Background(), tbl, s.Version+1, []Action{{Protocol: p}}))
	_, err := tbl.PlanVacuum(t.Context(), VacuumConfig{Retain: TableRetention})
	var fe *UnsupportedFeatureError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "rowTracking", fe.Feature)
	assert.Equal(t, "write", fe.Op)
}
