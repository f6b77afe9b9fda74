package ingest

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/validate"
	"github.com/geocompact/geocompact/validate/validatetest"
)

// retryFixture creates a Delta table by ingesting one file and returns
// an ingest of a second file, written but not committed, and the table's
// snapshot.
func retryFixture(t *testing.T) (*deltaIngest, *delta.Snapshot, string) {
	t.Helper()
	loc, dir := t.TempDir(), t.TempDir()
	first := filepath.Join(dir, "a.parquet")
	validatetest.Write(t, first, validatetest.File{Rows: validatetest.Points(2), Geo: validatetest.Geo(""), Extra: true})
	_, err := RunDelta(t.Context(), loc, Config{Files: []string{first}, Checks: validate.DefaultConfig(), Create: true})
	require.NoError(t, err)
	tbl, err := delta.OpenLocal(loc)
	require.NoError(t, err)
	cur, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	srcs, err := expandAndDigest([]string{first}, false)
	require.NoError(t, err)
	orphan := filepath.Join(loc, "part-orphan.parquet")
	require.NoError(t, os.WriteFile(orphan, []byte("x"), 0o644))
	d := &deltaIngest{ingester: &ingester{cfg: Config{Table: loc}, log: slog.New(slog.DiscardHandler)}, tbl: tbl, read: cur}
	d.setSources(srcs)
	d.written, d.rows = [][]*delta.Add{{{Path: "part-orphan.parquet"}}}, []int64{2}
	return d, cur, orphan
}

func TestDeltaRetryDropsFilesIngestedConcurrently(t *testing.T) {
	d, cur, orphan := retryFixture(t)
	res := &DeltaResult{}
	acts, err := d.retry(t.Context(), cur, cur, res)
	require.NoError(t, err)
	assert.Nil(t, acts, "nothing is left to commit")
	require.Len(t, res.Skipped, 1)
	assert.Equal(t, int64(0), *res.Skipped[0].Version)
	_, statErr := os.Stat(orphan)
	assert.True(t, os.IsNotExist(statErr), "the dropped file's data file stays: %v", statErr)
}

func TestDeltaRetryRefusesOtherGeometryProperties(t *testing.T) {
	d, cur, _ := retryFixture(t)
	planned := *cur
	md := *cur.Metadata
	md.Configuration = map[string]string{spatial.PropGeometryColumn: "geometry", spatial.PropGeometryEncoding: spatial.EncodingWKB, spatial.PropCRS: "EPSG:3857"}
	planned.Metadata = &md
	_, err := d.retry(t.Context(), &planned, cur, &DeltaResult{})
	var ce *delta.ConflictError
	require.ErrorAs(t, err, &ce)
	assert.True(t, strings.Contains(ce.Reason, spatial.PropCRS), ce.Reason)
}
