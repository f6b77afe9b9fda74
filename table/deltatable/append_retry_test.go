package deltatable

import (
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/ingest"
	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/validate"
	"github.com/geocompact/geocompact/validate/validatetest"
)

// retryFixture creates a Delta table by ingesting one file and returns
// an ingest of a second file, written but not committed, and the table's
// snapshot.
func retryFixture(t *testing.T) (*appender, *delta.Snapshot, string) {
	t.Helper()
	loc, dir := t.TempDir(), t.TempDir()
	first := filepath.Join(dir, "a.parquet")
	validatetest.Write(t, first, validatetest.File{Rows: validatetest.Points(2), Geo: validatetest.Geo(""), Extra: true})
	_, err := ingest.Run(t.Context(), Appender(loc), ingest.Config{Files: []string{first}, Checks: validate.DefaultConfig(), Create: true})
	require.NoError(t, err)
	tbl, err := delta.OpenLocal(loc)
	require.NoError(t, err)
	cur, err := tbl.Snapshot(t.Context())
	require.NoError(t, err)
	body, err := os.ReadFile(first)
	require.NoError(t, err)
	sum := sha256.Sum256(body)
	orphan := filepath.Join(loc, "part-orphan.parquet")
	require.NoError(t, os.WriteFile(orphan, []byte("x"), 0o644))
	a := &appender{location: loc, tbl: tbl, read: cur, log: slog.New(slog.DiscardHandler),
		sources: []table.Source{{Path: first, Digest: hex.EncodeToString(sum[:])}}}
	a.written, a.rows = [][]*delta.Add{{{Path: "part-orphan.parquet"}}}, []int64{2}
	return a, cur, orphan
}

func TestDeltaRetryDropsFilesIngestedConcurrently(t *testing.T) {
	d, cur, orphan := retryFixture(t)
	res := &table.Appended{}
	acts, err := d.retry(t.Context(), cur, cur, false, res)
	require.NoError(t, err)
	assert.Nil(t, acts, "nothing is left to commit")
	require.Len(t, res.Skipped, 1)
	assert.Equal(t, int64(0), *res.Skipped[0].Commit)
	_, statErr := os.Stat(orphan)
	assert.True(t, os.IsNotExist(statErr), "the dropped file's data file stays: %v", statErr)
}

func TestDeltaRetryRefusesOtherGeometryProperties(t *testing.T) {
	d, cur, _ := retryFixture(t)
	planned := *cur
	md := *cur.Metadata
	md.Configuration = map[string]string{spatial.PropGeometryColumn: "geometry", spatial.PropGeometryEncoding: spatial.EncodingWKB, spatial.PropCRS: "EPSG:3857"}
	planned.Metadata = &md
	_, err := d.retry(t.Context(), &planned, cur, false, &table.Appended{})
	var ce *delta.ConflictError
	require.ErrorAs(t, err, &ce)
	assert.True(t, strings.Contains(ce.Reason, spatial.PropCRS), ce.Reason)
}
