package engine_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/internal/testing/icebergtest"
	"github.com/geocompact/geocompact/table/icebergtable"
)

// TestPrepareDecidesOnce prepares a rewrite: it plans and writes nothing,
// its options are the request's over the table's properties, and it runs
// once; a second run is refused, as is one prepared on a stale table
// (the commit's conflict check).
func TestPrepareDecidesOnce(t *testing.T) {
	t.Parallel()
	cat, name := icebergtest.NewTable(t, icebergtest.SQLite(t), bench.GenerateConfig{Rows: 2000, Commits: 6,
		Properties: map[string]string{"write.target-file-size-bytes": "1048576"}})
	before := icebergtest.Load(t, cat, name)
	tbl, err := icebergtable.Open(t.Context(), cat, name)
	require.NoError(t, err)

	p, err := engine.Prepare(t.Context(), tbl, engine.Request{Curve: "hilbert", Options: icebergtest.Opts("min-input-files", "2")})
	require.NoError(t, err)
	assert.Equal(t, before.CurrentSnapshot().SnapshotID, p.Version())
	assert.Equal(t, int64(1<<20), p.Options().TargetFileSize, "the table's target size")
	assert.Equal(t, 2, p.Options().MinInputFiles)
	assert.Equal(t, before.CurrentSnapshot().SnapshotID, icebergtest.Load(t, cat, name).CurrentSnapshot().SnapshotID, "preparing commits nothing")

	res, err := p.Run(t.Context())
	require.NoError(t, err)
	assert.True(t, res.Verified)
	assert.Equal(t, 6, res.RewrittenDataFilesCount)
	_, err = p.Run(t.Context())
	require.ErrorContains(t, err, "runs once")
	icebergtest.CheckUnchanged(t, icebergtest.Digest(t, before), icebergtest.Load(t, cat, name))

	// Prepared on the table before that rewrite, a rewrite finds its
	// files gone at the commit and commits nothing.
	stale, err := engine.Prepare(t.Context(), tbl, engine.Request{Curve: "hilbert", Options: icebergtest.Opts("rewrite-all", "true")})
	require.NoError(t, err)
	after := icebergtest.Load(t, cat, name).CurrentSnapshot().SnapshotID
	_, err = stale.Run(t.Context())
	require.Error(t, err)
	assert.Equal(t, after, icebergtest.Load(t, cat, name).CurrentSnapshot().SnapshotID)
}

// TestPreparedPiecesOnce gives a prepared rewrite as pieces for other
// processes: once, in place of a run, and never for a layout chosen per
// group, which only a local rewrite can choose.
func TestPreparedPiecesOnce(t *testing.T) {
	t.Parallel()
	cat, name := icebergtest.NewTable(t, icebergtest.SQLite(t), bench.GenerateConfig{Rows: 2000, Commits: 4})
	before := icebergtest.Load(t, cat, name).CurrentSnapshot().SnapshotID
	tbl, err := icebergtable.Open(t.Context(), cat, name)
	require.NoError(t, err)

	p, err := engine.Prepare(t.Context(), tbl, engine.Request{Curve: "hilbert", Options: icebergtest.Opts("rewrite-all", "true")})
	require.NoError(t, err)
	pieces, err := p.Pieces(t.Context(), engine.PieceOptions{JobID: "0123456789abcdef"})
	require.NoError(t, err)
	require.NotNil(t, pieces)
	assert.Len(t, pieces.Groups(), len(p.Result().Plan.Groups))
	assert.Equal(t, p.Version(), pieces.Version())
	_, err = p.Pieces(t.Context(), engine.PieceOptions{})
	require.ErrorContains(t, err, "runs once")
	_, err = p.Run(t.Context())
	require.ErrorContains(t, err, "runs once", "pieces given, the rewrite does not run too")

	auto, err := engine.Prepare(t.Context(), tbl, engine.Request{Curve: "auto", Options: icebergtest.Opts("rewrite-all", "true")})
	require.NoError(t, err)
	_, err = auto.Pieces(t.Context(), engine.PieceOptions{})
	require.ErrorIs(t, err, engine.ErrAutoDistributed)
	assert.Equal(t, before, icebergtest.Load(t, cat, name).CurrentSnapshot().SnapshotID, "nothing committed")
}
