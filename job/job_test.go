package job

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/cluster"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/spatial"
)

// testJob is a planned job as a driver would send it, without its
// pieces (what a worker decodes before Open).
func testJob() *Rewrite {
	return &Rewrite{
		ID:         "0123456789abcdef",
		Table:      "geo.t",
		SnapshotID: 8123456789012345678,
		Request: engine.Request{
			Strategy:          engine.Sort,
			Curve:             "kd",
			AllowLayoutChange: true,
			AutoWindows:       []cluster.WindowSet{{Name: "1%", Windows: []spatial.Bound{{MinX: -1, MinY: -2, MaxX: 3, MaxY: 4.5}}}},
			Where:             "ts >= '2026-01-02' AND bbox(0, 0, 10, 10)",
			Options:           map[string]string{"target-file-size-bytes": "1048576", "rewrite-all": "true"},
			CommitRetries:     -1,
		},
		Groups: []engine.GroupSpec{
			{Partition: "day=2026-01-02", Files: []string{"s3://b/t/data/a.parquet", "s3://b/t/data/b.parquet"}, OutputFiles: 3, Records: 1200, Buckets: 4, Bounds: []uint64{10, 1 << 40, 1<<63 + 5}, CutShift: 6},
			{Partition: "", Files: []string{"s3://b/t/data/c.parquet"}, OutputFiles: 1, Records: 7, Whole: true},
		},
		Result: &engine.Result{RewrittenDataFilesCount: 3, FilesBefore: 9, BytesBefore: 123456, Strategy: "sort", SortOrder: "kd()"},
	}
}

func TestRewriteJSONRoundTrip(t *testing.T) {
	t.Parallel()
	want := testJob()
	b, err := json.Marshal(want)
	require.NoError(t, err)

	var keys map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b, &keys))
	for _, k := range []string{"id", "table", "snapshot_id", "request", "groups", "result"} {
		assert.Contains(t, keys, k)
	}
	var req map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(keys["request"], &req))
	assert.JSONEq(t, `[{"Name":"1%","Windows":[{"minx":-1,"miny":-2,"maxx":3,"maxy":4.5}]}]`, string(req["windows"]),
		"the request's windows travel under the key windows")

	var got Rewrite
	require.NoError(t, json.Unmarshal(b, &got))
	assert.Equal(t, want.ID, got.ID)
	assert.Equal(t, want.Table, got.Table)
	assert.Equal(t, want.SnapshotID, got.SnapshotID, "a snapshot id keeps all its digits")
	assert.Equal(t, want.Request, got.Request)
	assert.Equal(t, want.Groups, got.Groups)
	require.NotNil(t, got.Result)
	assert.Equal(t, want.Result.RewrittenDataFilesCount, got.Result.RewrittenDataFilesCount)
	assert.Equal(t, want.Result.BytesBefore, got.Result.BytesBefore)
	assert.Equal(t, want.Result.SortOrder, got.Result.SortOrder)
	assert.Equal(t, want.Tag(), got.Tag())

	_, err = got.open()
	assert.ErrorContains(t, err, "job 0123456789abcdef is not open", "a decoded job has no pieces until Open")
}

func TestIDsAndTags(t *testing.T) {
	t.Parallel()
	id := newID()
	assert.Len(t, id, 16)
	_, err := hex.DecodeString(id)
	require.NoError(t, err, "the id is hex")
	assert.NotEqual(t, id, newID())

	j := &Rewrite{ID: id}
	tag := j.Tag()
	assert.Equal(t, id[:8]+"-"+id[8:12]+"-"+id[12:16]+"-", tag, "the id, dashed as in a UUID, and the dash after it")
	a, b := j.writeID(), j.writeID()
	assert.NotEqual(t, a, b, "every write gets its own UUID")
	for _, u := range []string{a.String(), b.String()} {
		assert.True(t, strings.HasPrefix(u, tag), "%s carries the tag %s", u, tag)
	}
	other := &Rewrite{ID: newID()}
	assert.False(t, strings.HasPrefix(other.writeID().String(), tag), "another job's files do not carry the tag")
}

func TestMarkerAndResultPaths(t *testing.T) {
	t.Parallel()
	for _, loc := range []string{"s3://b/warehouse/geo/t", "s3://b/warehouse/geo/t/"} {
		assert.Equal(t, "s3://b/warehouse/geo/t/metadata/geocompact-job-0123456789abcdef.plan.json", MarkerPath(loc, "0123456789abcdef"))
		assert.Equal(t, "s3://b/warehouse/geo/t/metadata/geocompact-job-0123456789abcdef.json", ResultPath(loc, "0123456789abcdef"))
	}
}

// TestCanCommit is the sweep's rule: a job may still commit, and is left
// alone, while some group has every input file in the current snapshot.
func TestCanCommit(t *testing.T) {
	t.Parallel()
	j := &Rewrite{Groups: []engine.GroupSpec{
		{Files: []string{"a", "b"}},
		{Files: []string{"c"}},
	}}
	cases := []struct {
		name string
		live []string
		want bool
	}{
		{"all live", []string{"a", "b", "c"}, true},
		{"first group live", []string{"a", "b", "z"}, true},
		{"second group live", []string{"b", "c"}, true},
		{"each group lost a file", []string{"a", "z"}, false},
		{"nothing live", nil, false},
	}
	for _, tc := range cases {
		live := map[string]bool{}
		for _, f := range tc.live {
			live[f] = true
		}
		assert.Equal(t, tc.want, canCommit(j, live), tc.name)
	}
	assert.False(t, canCommit(&Rewrite{}, map[string]bool{"a": true}), "a job with no groups commits nothing")
}

// TestReadMarker reads a marker back as the job that wrote it, and
// refuses one whose name is not its job's or whose JSON does not decode.
func TestReadMarker(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	j := testJob()
	b, err := json.Marshal(j)
	require.NoError(t, err)
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, "metadata", name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, b, 0o644))
		return p
	}
	fs := icebergio.LocalFS{}

	p := write(filepath.Base(MarkerPath(dir, j.ID)), b)
	got, err := readMarker(fs, p)
	require.NoError(t, err)
	assert.Equal(t, j.ID, got.ID)
	assert.Equal(t, j.Groups, got.Groups)

	p = write(filepath.Base(MarkerPath(dir, "fedcba9876543210")), b)
	_, err = readMarker(fs, p)
	assert.ErrorContains(t, err, `names job "0123456789abcdef"`)

	p = write(filepath.Base(MarkerPath(dir, "1111111111111111")), []byte(`{"id": 7}`))
	_, err = readMarker(fs, p)
	assert.ErrorContains(t, err, "decode job marker")

	_, err = readMarker(fs, filepath.Join(dir, "metadata", "geocompact-job-none.plan.json"))
	assert.ErrorContains(t, err, "read job marker")
	assert.True(t, isNotExist(err))
}
