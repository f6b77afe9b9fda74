package posdeletes_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/internal/testing/committest"
	"github.com/geocompact/geocompact/maintain/posdeletes"
	"github.com/geocompact/geocompact/table/catalogs"
)

// conversions are the two kinds of commit a delete file rewrite makes.
var conversions = map[string]map[string]string{
	"merge":    {"rewrite-all": "true"},
	"equality": {posdeletes.OptConvertEquality: "true"},
}

// TestRewriteLostCommitRaceLeavesNoFiles: a rewrite whose every commit
// attempt loses the catalog's race fails with a conflict, keeps the other
// writer's rows, and leaves no file that no snapshot references.
func TestRewriteLostCommitRaceLeavesNoFiles(t *testing.T) {
	t.Parallel()
	for label, opts := range conversions {
		t.Run(label, func(t *testing.T) {
			t.Parallel()
			cat, name, _ := morTable(t, 2, idBelow(10), idsIn(100, 130))
			deleteByID(t, cat, idIn(500, 2900))
			rows := len(liveIDs(t, load(t, cat)))
			racing := &committest.Racing{Catalog: cat}
			_, err := posdeletes.Rewrite(t.Context(), racing, name, posdeletes.Config{Options: opts, CommitRetries: 1})
			require.ErrorIs(t, err, catalogs.ErrConflict)
			assert.Greater(t, racing.Commits.Load(), int32(1))
			after := load(t, cat)
			assert.Len(t, liveIDs(t, after), rows+int(racing.Appended.Load()))
			committest.AssertNoStrayFiles(t, after)
		})
	}
}

// TestRewriteUnknownCommitOutcomeDeletesNothing: a rewrite the catalog
// took but whose reply was lost fails without a conflict and deletes
// nothing the table now references.
func TestRewriteUnknownCommitOutcomeDeletesNothing(t *testing.T) {
	t.Parallel()
	for label, opts := range conversions {
		t.Run(label, func(t *testing.T) {
			t.Parallel()
			cat, name, _ := morTable(t, 2, idBelow(10), idsIn(100, 130))
			deleteByID(t, cat, idIn(500, 2900))
			before := load(t, cat)
			ids := liveIDs(t, before)
			_, err := posdeletes.Rewrite(t.Context(), committest.LostReply{Catalog: cat}, name, posdeletes.Config{Options: opts, CommitRetries: 1})
			require.ErrorIs(t, err, context.DeadlineExceeded)
			assert.False(t, errors.Is(err, catalogs.ErrConflict), "error %v must not be a conflict", err)
			after := load(t, cat)
			require.NotEqual(t, before.MetadataLocation(), after.MetadataLocation(), "the catalog took the commit")
			committest.AssertReferencedExist(t, after)
			assert.Equal(t, ids, liveIDs(t, after))
		})
	}
}
