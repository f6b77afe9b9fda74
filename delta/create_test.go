package delta

import (
	"errors"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSchemaFromArrow(t *testing.T) {
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "small", Type: arrow.PrimitiveTypes.Uint16, Nullable: true},
		{Name: "name", Type: arrow.BinaryTypes.LargeString, Nullable: true},
		{Name: "geometry", Type: arrow.BinaryTypes.Binary, Nullable: true},
		{Name: "at", Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}, Nullable: true},
		{Name: "local", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
		{Name: "amount", Type: &arrow.Decimal128Type{Precision: 12, Scale: 2}, Nullable: true},
		{Name: "tags", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
		{Name: "props", Type: arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Float64), Nullable: true},
		{Name: "bbox", Type: arrow.StructOf(arrow.Field{Name: "xmin", Type: arrow.PrimitiveTypes.Float32, Nullable: true}), Nullable: true},
	}, nil)
	st, err := SchemaFromArrow(sc)
	require.NoError(t, err)
	b, err := st.MarshalJSON()
	require.NoError(t, err)
	back, err := parseSchema(string(b))
	require.NoError(t, err)
	names := map[string]string{}
	for _, f := range back.Fields {
		names[f.Name] = f.Type.typeName()
	}
	assert.Equal(t, map[string]string{"id": "long", "small": "integer", "name": "string", "geometry": "binary",
		"at": "timestamp", "local": "timestamp_ntz", "amount": "decimal(12,2)", "tags": "array", "props": "map",
		"bbox": "struct"}, names)
	assert.False(t, back.Field("id").Nullable)
	assert.Equal(t, "float", back.Field("bbox").Type.(*StructType).Field("xmin").Type.typeName())

	_, err = SchemaFromArrow(arrow.NewSchema([]arrow.Field{{Name: "big", Type: arrow.PrimitiveTypes.Uint64}}, nil))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `column "big"`)
}

func TestCreateActions(t *testing.T) {
	st, err := SchemaFromArrow(arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "region", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "geometry", Type: arrow.BinaryTypes.Binary, Nullable: true},
	}, nil))
	require.NoError(t, err)
	acts, err := CreateActions(TableSpec{Schema: st, PartitionColumns: []string{"region"}, Configuration: map[string]string{"k": "v"}}, time.Now())
	require.NoError(t, err)
	require.Len(t, acts, 2)
	assert.Equal(t, &Protocol{MinReaderVersion: 1, MinWriterVersion: 2}, acts[0].Protocol)
	require.NoError(t, CheckWrite(acts[0].Protocol, acts[1].MetaData))

	tbl, err := OpenLocal(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, Commit(t.Context(), tbl, 0, append([]Action{NewCommitInfo("CREATE TABLE", nil, -1, nil)}, acts...)))
	s, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	assert.Equal(t, []string{"region"}, s.Metadata.PartitionColumns)
	assert.Equal(t, "v", s.Config("k", ""))
	pending, err := SnapshotOf(acts)
	require.NoError(t, err)
	assert.Equal(t, s.Schema, pending.Schema)

	for name, parts := range map[string][]string{
		"unknown": {"nope"}, "binary": {"geometry"}, "twice": {"region", "region"}, "all": {"id", "region", "geometry"},
	} {
		_, err := CreateActions(TableSpec{Schema: st, PartitionColumns: parts}, time.Now())
		assert.ErrorIs(t, err, ErrPartitionColumn, name)
	}

	ntz, err := SchemaFromArrow(arrow.NewSchema([]arrow.Field{{Name: "t", Type: &arrow.TimestampType{Unit: arrow.Microsecond}}}, nil))
	require.NoError(t, err)
	acts, err = CreateActions(TableSpec{Schema: ntz}, time.Now())
	require.NoError(t, err)
	assert.True(t, acts[0].Protocol.HasWriterFeature("timestampNtz"))
	assert.True(t, acts[0].Protocol.HasReaderFeature("timestampNtz"))
}

func TestFormatPartitionValueRoundTrips(t *testing.T) {
	mem := memory.DefaultAllocator
	day := arrow.Date32FromTime(time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC))
	ts := arrow.Timestamp(time.Date(2026, 3, 4, 5, 6, 7, 123456000, time.UTC).UnixMicro())
	cases := []struct {
		name string
		arr  func() arrow.Array
		dt   DataType
		want string
	}{
		{"long", func() arrow.Array { b := array.NewInt64Builder(mem); b.Append(-42); return b.NewArray() }, &PrimitiveType{Name: "long"}, "-42"},
		{"string", func() arrow.Array { b := array.NewStringBuilder(mem); b.Append("a/b c"); return b.NewArray() }, &PrimitiveType{Name: "string"}, "a/b c"},
		{"date", func() arrow.Array { b := array.NewDate32Builder(mem); b.Append(day); return b.NewArray() }, &PrimitiveType{Name: "date"}, "2026-03-04"},
		{"timestamp", func() arrow.Array {
			b := array.NewTimestampBuilder(mem, &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"})
			b.Append(ts)
			return b.NewArray()
		}, &PrimitiveType{Name: "timestamp"}, "2026-03-04T05:06:07.123456Z"},
		{"double", func() arrow.Array { b := array.NewFloat64Builder(mem); b.Append(0.5); return b.NewArray() }, &PrimitiveType{Name: "double"}, "0.5"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			arr := tc.arr()
			defer arr.Release()
			s, err := FormatPartitionValue(arr, 0)
			require.NoError(t, err)
			require.NotNil(t, s)
			assert.Equal(t, tc.want, *s)
			v, err := ParsePartitionValue(s, tc.dt)
			require.NoError(t, err)
			assert.NotNil(t, v)
		})
	}
	b := array.NewInt32Builder(mem)
	b.AppendNull()
	nulls := b.NewArray()
	defer nulls.Release()
	s, err := FormatPartitionValue(nulls, 0)
	require.NoError(t, err)
	assert.Nil(t, s)

	v := "a/b"
	assert.Equal(t, "p=a%2Fb/q=__HIVE_DEFAULT_PARTITION__", PartitionDir([]string{"p", "q"}, map[string]*string{"p": &v, "q": nil}))
}

func TestCommitAppendRetriesOnLatest(t *testing.T) {
	tbl := newTestTable(t, "none", nil)
	read := snap(t, tbl)
	// Another writer takes version 1 first.
	other := writeFile(t, tbl, read, 1, 0, 3)
	appendFiles(t, tbl, other)

	mine := writeFile(t, tbl, read, 2, 3, 5)
	acts := []Action{NewCommitInfo("WRITE", nil, read.Version, nil), {Add: mine}, NewTxn("app", 7, time.Now())}
	var seen int64 = -1
	v, err := CommitAppend(t.Context(), tbl, read, acts, 3, func(cur *Snapshot) ([]Action, error) {
		seen = cur.Version
		require.NoError(t, CheckAppend(read.Metadata, cur))
		return acts, nil
	})
	require.NoError(t, err)
	assert.Equal(t, int64(1), seen)
	assert.Equal(t, int64(2), v)
	s := snap(t, tbl)
	assert.Len(t, s.Files, 2)
	assert.Equal(t, int64(7), s.Txns["app"])

	// A retry that finds nothing left to do commits nothing.
	v, err = CommitAppend(t.Context(), tbl, read, acts, 3, func(*Snapshot) ([]Action, error) { return nil, nil })
	require.NoError(t, err)
	assert.Equal(t, int64(-1), v)
	assert.Equal(t, int64(2), snap(t, tbl).Version)

	// Out of attempts: the lost race is reported.
	_, err = CommitAppend(t.Context(), tbl, read, acts, 1, nil)
	assert.True(t, errors.As(err, new(*VersionExistsError)), "got %v", err)
}

func TestCheckAppendRefusesSchemaChange(t *testing.T) {
	tbl := newTestTable(t, "none", nil)
	read := snap(t, tbl)
	md := *read.Metadata
	md.SchemaString = `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]}`
	md.PartitionColumns = nil
	require.NoError(t, Commit(t.Context(), tbl, 1, []Action{{MetaData: &md}}))
	err := CheckAppend(read.Metadata, snap(t, tbl))
	var ce *ConflictError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "the table schema changed", ce.Reason)
}
