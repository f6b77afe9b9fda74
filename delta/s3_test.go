package delta

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/internal/testing/reliability"
	"github.com/geocompact/geocompact/internal/testing/testenv"
)

// s3Table returns an empty S3 location for a Delta table on the loopback
// object store (see reliability.UseS3), with the SDK pointed at it.
func s3Table(t *testing.T) (string, *S3Storage) {
	t.Helper()
	srv := reliability.UseS3(t)
	t.Setenv("AWS_ENDPOINT_URL_S3", srv.Endpoint)
	loc := "s3://" + srv.Bucket + "/" + srv.Prefix + "/tbl"
	st, err := NewS3Storage(t.Context(), loc)
	require.NoError(t, err)
	return loc, st
}

// upload copies the local table directory src to st.
func upload(t *testing.T, src string, st *S3Storage) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return st.Put(t.Context(), filepath.ToSlash(rel), b)
	})
	require.NoError(t, err)
}

func TestS3ReadsGoldenTables(t *testing.T) {
	for _, c := range []struct {
		name string
		cols []string
	}{
		{"dv-partitioned-with-checkpoint", []string{"part", "col1", "col2"}},
		{"table-with-columnmapping-mode-name", []string{"ByteType"}},
		{"v2-checkpoint-parquet", []string{"id"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			loc, st := s3Table(t)
			local := golden(t, c.name)
			upload(t, filepath.Join(testenv.DeltaGolden(t), c.name), st)
			remote, err := Open(t.Context(), loc)
			require.NoError(t, err)
			ls, rs := snap(t, local), snap(t, remote)
			assert.Equal(t, ls.Version, rs.Version)
			assert.Equal(t, filePaths(ls), filePaths(rs))
			want := readRows(t, local, c.cols...)
			require.NotEmpty(t, want)
			assert.Equal(t, want, readRows(t, remote, c.cols...))
		})
	}
}

func TestS3WriteOptimizeVacuum(t *testing.T) {
	loc, st := s3Table(t)
	tbl := createTestTable(t, &Table{Store: st}, "name", nil)

	err := st.PutIfAbsent(t.Context(), "_delta_log/00000000000000000000.json", []byte("{}"))
	require.ErrorIs(t, err, ErrExist, "the store must honour If-None-Match: * for concurrent writers to be safe")

	s := snap(t, tbl)
	appendFiles(t, tbl, writeFile(t, tbl, s, 1, 0, 10), writeFile(t, tbl, s, 1, 10, 20))
	_, acts := optimizePlan(t, tbl)
	v, err := CommitRewrite(t.Context(), tbl, snap(t, tbl).Version, acts, 1)
	require.NoError(t, err)
	assert.Equal(t, int64(2), v)

	again, err := Open(t.Context(), loc)
	require.NoError(t, err)
	assert.Equal(t, sorted(idRange(1, 0, 20)), ids(t, again))
	require.Len(t, snap(t, again).Files, 1)

	plan, err := again.PlanVacuum(t.Context(), VacuumConfig{Retain: TableRetention, Now: time.Now().Add(8 * 24 * time.Hour)})
	require.NoError(t, err)
	var names []string
	for _, f := range plan.Files {
		names = append(names, f.Path)
	}
	assert.ElementsMatch(t, []string{"part=1/f-0-10.parquet", "part=1/f-10-20.parquet"}, names)
	n, err := plan.Execute(t.Context(), again)
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	assert.Equal(t, sorted(idRange(1, 0, 20)), ids(t, again), "the table reads the same after vacuum")
	_, err = st.Open(t.Context(), "part=1/f-0-10.parquet")
	require.ErrorIs(t, err, os.ErrNotExist)
}

// TestS3VacuumKeepsLiveFilesNamedByAbsoluteURIs: on S3, a log naming its
// live files by s3:// and s3a:// URIs keeps them through a vacuum, and a
// file in a sibling prefix the log removed long ago is never deleted.
func TestS3VacuumKeepsLiveFilesNamedByAbsoluteURIs(t *testing.T) {
	loc, st := s3Table(t)
	tbl := createTestTable(t, &Table{Store: st}, "none", nil)
	s := snap(t, tbl)
	a, b := writeNamedFile(t, tbl, s, 1, "part=1/odd name%41.parquet", 0, 10), writeFile(t, tbl, s, 1, 10, 20)
	a.Path = st.TableRoot().URI("part=1/odd name%41.parquet")
	b.Path = "s3a://" + strings.TrimPrefix(st.TableRoot().URI("part=1/f-10-20.parquet"), "s3://")
	appendFiles(t, tbl, a, b)

	sibling, err := NewS3Storage(t.Context(), loc+"-sibling")
	require.NoError(t, err)
	require.NoError(t, sibling.Put(t.Context(), "f.parquet", []byte("not ours")))
	old := time.Now().Add(-30 * 24 * time.Hour).UnixMilli()
	s = snap(t, tbl)
	require.NoError(t, Commit(t.Context(), tbl, s.Version+1, []Action{{Remove: &Remove{
		Path: sibling.TableRoot().URI("f.parquet"), DeletionTimestamp: &old, DataChange: true}}}))

	plan, err := tbl.PlanVacuum(t.Context(), VacuumConfig{Retain: TableRetention, Now: time.Now().Add(8 * 24 * time.Hour)})
	require.NoError(t, err)
	assert.Empty(t, plan.Files, "every file under the table is live")
	plan, err = tbl.PlanVacuum(t.Context(), VacuumConfig{Retain: 0, Force: true, Now: time.Now().Add(time.Hour)})
	require.NoError(t, err)
	assert.Empty(t, plan.Files, "every file under the table is live")
	assert.Equal(t, sorted(idRange(1, 0, 20)), ids(t, tbl))
	f, err := sibling.Open(t.Context(), "f.parquet")
	require.NoError(t, err, "the file outside the table is kept")
	f.Close()
}
