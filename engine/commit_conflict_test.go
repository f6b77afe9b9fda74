package engine_test

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/internal/testing/committest"
	"github.com/geocompact/geocompact/internal/testing/enginetest"
	"github.com/geocompact/geocompact/internal/testing/testenv"
	"github.com/geocompact/geocompact/table/catalogs"
)

// racingCatalog is a catalog whose CommitTable loses the race (all of
// them, or the first lose): just before forwarding a commit, another
// writer appends a row through the wrapped catalog, so the commit's base
// is stale and the catalog refuses it on its compare-and-swap.
type racingCatalog struct {
	catalog.Catalog
	t       *testing.T
	lose    int32 // 0: every commit
	commits atomic.Int32
}

func (c *racingCatalog) CommitTable(ctx context.Context, ident table.Identifier, reqs []table.Requirement, updates []table.Update) (table.Metadata, string, error) {
	if n := c.commits.Add(1); c.lose > 0 && n > c.lose {
		return c.Catalog.CommitTable(ctx, ident, reqs, updates)
	}
	// The other writer is another process: its files are not the
	// commit's, so it runs under the test's context, not the commit's.
	tbl, err := c.Catalog.LoadTable(c.t.Context(), ident)
	if err != nil {
		return nil, "", err
	}
	rdr := oneRow(c.t, tbl, 0)
	defer rdr.Release()
	if _, err := tbl.Append(c.t.Context(), rdr, nil); err != nil {
		return nil, "", err
	}
	return c.Catalog.CommitTable(ctx, ident, reqs, updates)
}

// TestLostCommitRaceLeavesNoFiles: a rewrite whose every commit attempt
// (iceberg-go's replays and our own retries) loses the catalog's race
// fails with a conflict, keeps every row the other writer appended, and
// leaves no file that no snapshot references: the manifests and manifest
// lists its refused attempts wrote are deleted.
func TestLostCommitRaceLeavesNoFiles(t *testing.T) {
	t.Parallel()
	eachCatalog(t, func(t *testing.T, c testenv.Catalog) {
		inner, name, tbl := racedTable(t, c)
		before := tableDigest(t, tbl)
		cat := &racingCatalog{Catalog: inner, t: t}
		res, err := enginetest.Rewrite(t.Context(), cat, name, engine.Request{Curve: "hilbert", CommitRetries: 1})
		require.Error(t, err, "result %+v, commits %d", res, cat.commits.Load())
		assert.True(t, errors.Is(err, catalogs.ErrConflict), "error %v, want a conflict", err)
		require.Equal(t, int32(4), cat.commits.Load(), "two attempts of two catalog commits each")

		// Nothing of the rewrite was committed, and every row the other
		// writer appended is there.
		after := mustLoad(t, inner, name)
		appended := int64(0)
		for _, s := range after.Metadata().Snapshots()[len(tbl.Metadata().Snapshots()):] {
			require.NotNil(t, s.Summary)
			assert.Equal(t, table.OpAppend, s.Summary.Operation)
			n, err := strconv.ParseInt(s.Summary.Properties["added-records"], 10, 64)
			require.NoError(t, err)
			appended += n
		}
		assert.Len(t, after.Metadata().Snapshots(), len(tbl.Metadata().Snapshots())+4)
		assert.Equal(t, before.Rows+appended, tableDigest(t, after).Rows)
		committest.AssertNoStrayFiles(t, after)
	})
}

// TestReplayedCommitLeavesNoFiles: a rewrite whose first catalog commit
// loses the race and whose replay (iceberg-go's, on the fresh head) is
// taken leaves no file that no snapshot references: the manifests and
// manifest list of the refused try are deleted.
func TestReplayedCommitLeavesNoFiles(t *testing.T) {
	t.Parallel()
	eachCatalog(t, func(t *testing.T, c testenv.Catalog) {
		inner, name, tbl := racedTable(t, c)
		before := tableDigest(t, tbl)
		cat := &racingCatalog{Catalog: inner, t: t, lose: 1}
		res := rewrite(t, cat, name, engine.Request{Curve: "hilbert"})
		require.Equal(t, 1, res.SnapshotsCommitted)
		require.Equal(t, int32(2), cat.commits.Load(), "one refused commit, one taken")

		after := mustLoad(t, inner, name)
		assert.Equal(t, table.OpReplace, after.CurrentSnapshot().Summary.Operation)
		assert.Equal(t, before.Rows+1, tableDigest(t, after).Rows, "the other writer's row is kept")
		committest.AssertNoStrayFiles(t, after)
	})
}

// racedTable makes a table to race on, whose commits iceberg-go replays
// once, quickly.
func racedTable(t *testing.T, c testenv.Catalog) (catalog.Catalog, string, *table.Table) {
	t.Helper()
	inner, name := newTable(t, c, bench.GenerateConfig{Rows: 2000, Commits: 6})
	tx := mustLoad(t, inner, name).NewTransaction()
	require.NoError(t, tx.SetProperties(map[string]string{
		table.CommitNumRetriesKey:     "1",
		table.CommitMinRetryWaitMsKey: "1",
		table.CommitMaxRetryWaitMsKey: "10",
	}))
	tbl, err := tx.Commit(t.Context())
	require.NoError(t, err)
	return inner, name, tbl
}

// TestUnknownCommitOutcomeDeletesNothing: a commit the catalog took but
// whose reply was lost fails the rewrite without deleting anything the
// table now references: the new snapshot reads the same rows.
func TestUnknownCommitOutcomeDeletesNothing(t *testing.T) {
	t.Parallel()
	eachCatalog(t, func(t *testing.T, c testenv.Catalog) {
		inner, name := newTable(t, c, bench.GenerateConfig{Rows: 2000, Commits: 6})
		before := tableDigest(t, mustLoad(t, inner, name))
		_, err := enginetest.Rewrite(t.Context(), committest.LostReply{Catalog: inner}, name, engine.Request{Curve: "hilbert"})
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.False(t, errors.Is(err, catalogs.ErrConflict), "error %v must not be a conflict", err)

		after := mustLoad(t, inner, name)
		require.Equal(t, table.OpReplace, after.CurrentSnapshot().Summary.Operation)
		committest.AssertReferencedExist(t, after)
		assert.Equal(t, before, tableDigest(t, after))
	})
}
