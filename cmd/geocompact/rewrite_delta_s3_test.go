package main

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/delta/deltatest"
	"github.com/geocompact/geocompact/internal/testing/reliability"
)

// putLog is a reverse proxy in front of an S3 endpoint that records, for
// every PUT, the object key and its If-None-Match header.
type putLog struct {
	mu   sync.Mutex
	puts map[string]string // path -> If-None-Match
}

func newPutLog(t *testing.T, endpoint string) (*putLog, string) {
	t.Helper()
	target, err := url.Parse(endpoint)
	require.NoError(t, err)
	l := &putLog{puts: map[string]string{}}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ErrorLog = log.New(io.Discard, "", 0) // a killed client's requests end in errors
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut {
			l.mu.Lock()
			l.puts[r.URL.Path] = r.Header.Get("If-None-Match")
			l.mu.Unlock()
		}
		proxy.ServeHTTP(w, r) // the Host header stays the one the client signed
	}))
	t.Cleanup(srv.Close)
	return l, srv.URL
}

// ifNoneMatch returns the If-None-Match header of the PUT of the object
// whose URL path ends in suffix, and whether there was one.
func (l *putLog) ifNoneMatch(suffix string) (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for p, h := range l.puts {
		if strings.HasSuffix(p, suffix) {
			return h, true
		}
	}
	return "", false
}

// count is how many objects were put whose URL path satisfies match.
func (l *putLog) count(match func(path string) bool) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for p := range l.puts {
		if match(p) {
			n++
		}
	}
	return n
}

// mirrorS3 copies every object of the table st holds into a fresh local
// directory, so the local helpers can read and parse it.
func mirrorS3(t *testing.T, st delta.Storage) string {
	t.Helper()
	dir := t.TempDir()
	objs, err := st.List(t.Context(), "", true)
	require.NoError(t, err)
	for _, o := range objs {
		f, err := st.Open(t.Context(), o.Path)
		require.NoError(t, err)
		b, err := io.ReadAll(f)
		require.NoError(t, f.Close())
		require.NoError(t, err)
		p := filepath.Join(dir, filepath.FromSlash(o.Path))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, b, 0o644))
	}
	return dir
}

// appendS3Files appends files of points to tbl, ids from first on, over
// two partitions, and returns their adds.
func appendS3Files(t *testing.T, tbl *delta.Table, first int64, files int) []*delta.Add {
	t.Helper()
	var adds []*delta.Add
	for i := range files {
		id := first + int64(i*50)
		rows := make([]deltatest.Row, 50)
		for r := range rows {
			rows[r] = deltatest.Point(t, float64(id%360)-180+float64(r)/100, float64(r)-25)
		}
		adds = append(adds, deltatest.WriteFile(t, tbl, fmt.Sprintf("f-%d.parquet", id), fmt.Sprintf("p%d", i%2), id, rows...))
	}
	deltatest.Append(t, tbl, adds...)
	return adds
}

// TestRewriteDeltaS3 optimizes a partitioned Delta table with column
// mapping and a deletion vector on the loopback S3 server, through the
// sql OPTIMIZE statement and then rewrite --delta: each time the rows are
// unchanged, the new version is one complete OPTIMIZE, and it was put with
// If-None-Match: *, S3's conditional create.
func TestRewriteDeltaS3(t *testing.T) {
	srv := reliability.UseS3(t)
	puts, endpoint := newPutLog(t, srv.Endpoint)
	t.Setenv("AWS_ENDPOINT_URL_S3", endpoint)
	loc := "s3://" + srv.Bucket + "/" + srv.Prefix + "/pings"
	st, err := delta.NewS3Storage(t.Context(), loc)
	require.NoError(t, err)
	tbl := &delta.Table{Store: st}
	deltatest.CreateIn(t, tbl, deltatest.Options{Partitioned: true, ColumnMapping: "name"})
	adds := appendS3Files(t, tbl, 0, 10) // five small files a partition: candidates
	deltatest.DeleteRows(t, tbl, adds[1], 0, 7)
	want := deltaContent(t, mirrorS3(t, st))
	require.Len(t, want, 10*50-2)

	optimized := func(t *testing.T, before int64) {
		t.Helper()
		v := deltatest.Snapshot(t, tbl).Version
		require.Equal(t, before+1, v, "one new version")
		h, ok := puts.ifNoneMatch("/" + delta.CommitPath(v))
		require.True(t, ok, "the commit of version %d went through the proxy", v)
		assert.Equal(t, "*", h, "the commit is a conditional create")
		local := mirrorS3(t, st)
		removes, added := optimizeActions(t, local, v)
		assert.NotEmpty(t, removes)
		assert.NotEmpty(t, added)
		assert.Equal(t, want, deltaContent(t, local), "the rows are unchanged")
	}

	before := deltatest.Snapshot(t, tbl).Version
	r := runCLI(t, "", false, "sql", "OPTIMIZE delta.`"+loc+"` HILBERT BY (bbox_minx, bbox_miny)")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	optimized(t, before)

	more := appendS3Files(t, tbl, 1000, 4)
	deltatest.DeleteRows(t, tbl, more[2], 3)
	want = deltaContent(t, mirrorS3(t, st))
	require.Len(t, want, 10*50-2+4*50-1)
	before = deltatest.Snapshot(t, tbl).Version
	r = runCLI(t, "", false, "rewrite", "--delta", loc, "--curve", "hilbert", "--option", "rewrite-all=true")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	optimized(t, before)
	for _, a := range deltatest.Snapshot(t, tbl).Files {
		assert.Nil(t, a.DeletionVector, "rewritten files carry no deletion vector: %s", a.Path)
	}
}
