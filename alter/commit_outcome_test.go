package alter_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/alter"
	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/internal/testing/committest"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/table/layouts"
)

// TestAlterLostCommitRaceLeavesNoFiles: an alter whose every commit
// attempt loses the catalog's race fails with a conflict (exit 4), after
// retrying on a fresh load, and leaves no file that no snapshot
// references.
func TestAlterLostCommitRaceLeavesNoFiles(t *testing.T) {
	cat, name := newTable(t, bench.GenerateConfig{Rows: 200, Commits: 2})
	racing := &committest.Racing{Catalog: cat}
	_, err := alter.Apply(t.Context(), opened(t, racing, name), alter.Request{Curve: "hilbert"})
	require.ErrorIs(t, err, catalogs.ErrConflict)
	assert.True(t, catalogs.IsRetryable(err))
	after := load(t, cat, name)
	assert.NotContains(t, after.Properties(), layouts.Prop, "nothing committed")
	committest.AssertNoStrayFiles(t, after)
}

// TestAlterUnknownCommitOutcomeDeletesNothing: an alter the catalog took
// but whose reply was lost fails without a conflict, is not retried, and
// deletes nothing the table now references.
func TestAlterUnknownCommitOutcomeDeletesNothing(t *testing.T) {
	cat, name := newTable(t, bench.GenerateConfig{Rows: 200, Commits: 2})
	before := load(t, cat, name)
	_, err := alter.Apply(t.Context(), opened(t, committest.LostReply{Catalog: cat}, name), alter.Request{Curve: "hilbert"})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.False(t, errors.Is(err, catalogs.ErrConflict), "error %v must not be a conflict", err)
	after := load(t, cat, name)
	assert.Equal(t, "hilbert()", after.Properties()[layouts.Prop], "the catalog took the commit")
	assert.Len(t, slices.Collect(after.Metadata().PreviousFiles()), len(slices.Collect(before.Metadata().PreviousFiles()))+1, "committed once, not retried")
	committest.AssertReferencedExist(t, after)
}
