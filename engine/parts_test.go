package engine_test

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/internal/testing/enginetest"
)

// TestBinpackInParts bin-packs twin tables on one, two and three lanes:
// with more than one, the group is read and written in that many parts at
// once, and the rows, their extent and checksum are unchanged, every row
// is in exactly one file, and as many files are added as planned.
func TestBinpackInParts(t *testing.T) {
	t.Parallel()
	cfg := bench.GenerateConfig{Rows: 20000, Commits: 12, Distribution: bench.Clustered}
	a, b, name := twinTables(t, cfg, nil)
	c, _ := newTable(t, sqlite(t), cfg)
	before := tableDigest(t, mustLoad(t, a, name))
	req := engine.Request{Options: opts("rewrite-all", "true", "target-file-size-bytes", "65536")}
	for lanes, cat := range map[int]catalog.Catalog{1: a, 2: b, 3: c} {
		var parts atomic.Int32
		ctx := engine.WithTestHooks(t.Context(), engine.TestHooks{Lanes: lanes, WriteParts: func(n int) { parts.Store(int32(n)) }})
		res, err := enginetest.Rewrite(ctx, cat, name, req)
		require.NoError(t, err, "lanes %d", lanes)
		require.Len(t, res.Plan.Groups, 1)
		g := res.Plan.Groups[0]
		require.Greater(t, g.OutputFiles, 3)
		if lanes == 1 {
			assert.Zero(t, parts.Load(), "one lane: one stream")
		} else {
			assert.EqualValues(t, lanes, parts.Load(), "lanes %d", lanes)
		}
		assert.Equal(t, g.OutputFiles, res.AddedDataFilesCount, "lanes %d: the files planned", lanes)
		assert.Equal(t, len(tableFiles(t, mustLoad(t, cat, name))), g.OutputFiles)
		checkUnchanged(t, before, mustLoad(t, cat, name))
		seen := map[int64]bool{}
		for _, ids := range fileRows(t, mustLoad(t, cat, name)) {
			for _, id := range ids {
				assert.False(t, seen[id], "lanes %d: row %d in one file only", lanes, id)
				seen[id] = true
			}
		}
		assert.Len(t, seen, int(cfg.Rows), "lanes %d", lanes)
	}
}

// TestBinpackInPartsFailsWhole appends a file with a broken geometry in
// its 2,001st row, then 9,000 valid rows, to twin tables: on two lanes the part that reads it fails, the
// other part is cancelled, and the error is the one a single stream
// gives, naming the row by its place in the whole group; no file is left
// beside the table's and nothing is committed.
func TestBinpackInPartsFailsWhole(t *testing.T) {
	t.Parallel()
	cfg := bench.GenerateConfig{Rows: 6000, Commits: 6}
	one, two, name := twinTables(t, cfg, func(tbl *table.Table) {
		// Newest first: the valid 9,000 rows are the first part, and
		// the broken file opens the second.
		appendBrokenPoints(t, appendBrokenPoints(t, tbl, 3000, 2000), 9000, -1)
	})
	req := engine.Request{Options: opts("rewrite-all", "true", "target-file-size-bytes", "16384")}
	errs := map[int]string{}
	for lanes, cat := range map[int]catalog.Catalog{1: one, 2: two} {
		tbl := mustLoad(t, cat, name)
		dir := strings.TrimPrefix(tbl.Location(), "file://")
		before, snap := dirFiles(t, dir), tbl.CurrentSnapshot().SnapshotID
		var parts atomic.Int32
		ctx := engine.WithTestHooks(t.Context(), engine.TestHooks{Lanes: lanes, WriteParts: func(n int) { parts.Store(int32(n)) }})
		_, err := enginetest.Rewrite(ctx, cat, name, req)
		require.ErrorIs(t, err, engine.ErrInvalidData, "lanes %d", lanes)
		assert.NotErrorIs(t, err, context.Canceled, "the failing part's error, not the other's cancellation")
		assert.EqualValues(t, map[int]int32{1: 0, 2: 2}[lanes], parts.Load(), "lanes %d", lanes)
		assert.Equal(t, before, dirFiles(t, dir), "lanes %d: no file left", lanes)
		assert.Equal(t, snap, mustLoad(t, cat, name).CurrentSnapshot().SnapshotID, "lanes %d: nothing committed", lanes)
		errs[lanes] = err.Error()
	}
	assert.Equal(t, errs[1], errs[2], "the same error on one lane and two")
	assert.Contains(t, errs[2], "first at row 11000 of the group", "the 2,001st row of the file read after the first 9,000")
}

// TestCancelledBinpackPartsLeaveNoFiles cancels a bin-pack as its parts
// start: the rewrite fails with the cancellation, no file is left beside
// the table's and nothing is committed.
func TestCancelledBinpackPartsLeaveNoFiles(t *testing.T) {
	t.Parallel()
	cat, name := newTable(t, sqlite(t), bench.GenerateConfig{Rows: 20000, Commits: 12})
	tbl := mustLoad(t, cat, name)
	dir := strings.TrimPrefix(tbl.Location(), "file://")
	before, snap := dirFiles(t, dir), tbl.CurrentSnapshot().SnapshotID
	ctx, cancel := context.WithCancelCause(t.Context())
	stop := errors.New("interrupted")
	ctx = engine.WithTestHooks(ctx, engine.TestHooks{Lanes: 2, WriteParts: func(int) { cancel(stop) }})
	_, err := enginetest.Rewrite(ctx, cat, name, engine.Request{Options: opts("rewrite-all", "true", "target-file-size-bytes", "65536")})
	require.Error(t, err)
	assert.ErrorIs(t, err, stop)
	assert.Equal(t, before, dirFiles(t, dir), "no file left")
	assert.Equal(t, snap, mustLoad(t, cat, name).CurrentSnapshot().SnapshotID, "nothing committed")
}

// appendBrokenPoints appends a file of rows points whose row bad claims
// coordinates it does not have.
func appendBrokenPoints(t *testing.T, tbl *table.Table, rows, bad int) *table.Table {
	t.Helper()
	sc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, false, false)
	require.NoError(t, err)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	point := binary.LittleEndian.AppendUint32([]byte{1}, 1)
	point = binary.LittleEndian.AppendUint64(point, math.Float64bits(1))
	point = binary.LittleEndian.AppendUint64(point, math.Float64bits(1))
	for i := range rows {
		b.Field(0).(*array.Int64Builder).Append(int64(-1 - i))
		b.Field(1).(*array.TimestampBuilder).Append(0)
		b.Field(2).(*array.Int32Builder).Append(1)
		if i == bad {
			b.Field(3).(*array.BinaryBuilder).Append(point[:7])
		} else {
			b.Field(3).(*array.BinaryBuilder).Append(point)
		}
		for c := 4; c < 8; c++ {
			b.Field(c).(*array.Float64Builder).Append(1)
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	rdr, err := array.NewRecordReader(sc, []arrow.RecordBatch{rec})
	require.NoError(t, err)
	defer rdr.Release()
	out, err := tbl.Append(t.Context(), rdr, nil)
	require.NoError(t, err)
	return out
}
