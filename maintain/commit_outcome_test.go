package maintain_test

import (
	"context"
	"errors"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/internal/testing/committest"
	"github.com/geocompact/geocompact/maintain"
	"github.com/geocompact/geocompact/table/catalogs"
)

// commitCommands are the maintenance commands that commit, each run on
// the table called name of cat with a budget of one retry.
var commitCommands = map[string]func(ctx context.Context, cat catalog.Catalog, name string) error{
	"rewrite-manifests": func(ctx context.Context, cat catalog.Catalog, name string) error {
		_, err := maintain.RewriteManifests(ctx, cat, name, maintain.ManifestsConfig{CommitRetries: 1})
		return err
	},
	"expire": func(ctx context.Context, cat catalog.Catalog, name string) error {
		_, err := maintain.Expire(ctx, cat, name, maintain.ExpireConfig{RetainLast: 1, Force: true, CommitRetries: 1})
		return err
	},
}

// TestMaintainLostCommitRaceLeavesNoFiles: a maintenance commit whose
// every attempt loses the catalog's race fails with a conflict, keeps the
// other writer's rows, and leaves no file that no snapshot references.
func TestMaintainLostCommitRaceLeavesNoFiles(t *testing.T) {
	for label, run := range commitCommands {
		t.Run(label, func(t *testing.T) {
			const name = "t.race"
			cat := fragmented(t, name, 1000, 8)
			rows, _ := liveRows(t, load(t, cat, name))
			racing := &committest.Racing{Catalog: cat}
			err := run(t.Context(), racing, name)
			require.ErrorIs(t, err, catalogs.ErrConflict)
			assert.Greater(t, racing.Commits.Load(), int32(1))
			after := load(t, cat, name)
			got, _ := liveRows(t, after)
			assert.Equal(t, rows+racing.Appended.Load(), got)
			committest.AssertNoStrayFiles(t, after)
		})
	}
}

// TestMaintainUnknownCommitOutcomeDeletesNothing: a maintenance commit the
// catalog took but whose reply was lost fails without a conflict and
// deletes nothing the table now references.
func TestMaintainUnknownCommitOutcomeDeletesNothing(t *testing.T) {
	for label, run := range commitCommands {
		t.Run(label, func(t *testing.T) {
			const name = "t.lost"
			cat := fragmented(t, name, 1000, 8)
			before := load(t, cat, name)
			rows, _ := liveRows(t, before)
			err := run(t.Context(), committest.LostReply{Catalog: cat}, name)
			require.ErrorIs(t, err, context.DeadlineExceeded)
			assert.False(t, errors.Is(err, catalogs.ErrConflict), "error %v must not be a conflict", err)
			after := load(t, cat, name)
			require.NotEqual(t, before.MetadataLocation(), after.MetadataLocation(), "the catalog took the commit")
			committest.AssertReferencedExist(t, after)
			got, _ := liveRows(t, after)
			assert.Equal(t, rows, got)
		})
	}
}
