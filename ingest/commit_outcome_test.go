package ingest_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/internal/testing/committest"
	"github.com/geocompact/geocompact/table/catalogs"
)

// ingested makes a table of format version v with one ingest.
func ingested(t *testing.T, v int) (catalog.Catalog, *table.Table) {
	t.Helper()
	cat, err := catalogs.Open(t.Context(), catalogs.Spec{Warehouse: t.TempDir()})
	require.NoError(t, err)
	cfg := config("gis.c", pointsFile(t, 5))
	cfg.FormatVersion = v
	_, err = runIceberg(t.Context(), cat, cfg)
	require.NoError(t, err)
	tbl, err := catalogs.LoadTable(t.Context(), cat, "gis.c")
	require.NoError(t, err)
	return cat, tbl
}

// TestIngestLostCommitRaceLeavesNoFiles: an ingest whose every commit
// attempt loses the catalog's race fails with a conflict and leaves no
// file that no snapshot references: neither its data files nor the
// manifests, manifest lists and metadata files its refused attempts wrote.
func TestIngestLostCommitRaceLeavesNoFiles(t *testing.T) {
	for _, v := range []int{2, 3} {
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) {
			cat, before := ingested(t, v)
			cfg := config("gis.c", pointsFile(t, 6))
			cfg.CommitRetries = 1
			racing := &committest.Racing{Catalog: cat}
			_, err := runIceberg(t.Context(), racing, cfg)
			require.ErrorIs(t, err, catalogs.ErrConflict)
			assert.Greater(t, racing.Commits.Load(), int32(1))
			after, err := catalogs.LoadTable(t.Context(), cat, "gis.c")
			require.NoError(t, err)
			rows, err := after.Scan().ToArrowTable(t.Context())
			require.NoError(t, err)
			defer rows.Release()
			assert.Equal(t, 5+racing.Appended.Load(), rows.NumRows(), "only the other writer's rows were added")
			assert.Len(t, after.Metadata().Snapshots(), len(before.Metadata().Snapshots())+int(racing.Commits.Load()))
			committest.AssertNoStrayFiles(t, after)
		})
	}
}

// canceledAfterCommit takes every commit and then reports that its
// context was canceled, as when the command is interrupted while the
// catalog's reply is on its way.
type canceledAfterCommit struct{ catalog.Catalog }

func (c canceledAfterCommit) CommitTable(ctx context.Context, ident table.Identifier, reqs []table.Requirement, updates []table.Update) (table.Metadata, string, error) {
	if _, _, err := c.Catalog.CommitTable(ctx, ident, reqs, updates); err != nil {
		return nil, "", err
	}
	return nil, "", fmt.Errorf("commit %v: %w", ident, context.Canceled)
}

// TestIngestUnknownCommitOutcomeDeletesNothing: an ingest whose commit the
// catalog took but whose reply was lost, or which was canceled before the
// reply came, fails without a conflict and deletes nothing the table now
// references.
func TestIngestUnknownCommitOutcomeDeletesNothing(t *testing.T) {
	wrap := map[string]func(catalog.Catalog) catalog.Catalog{
		"reply-lost": func(c catalog.Catalog) catalog.Catalog { return committest.LostReply{Catalog: c} },
		"canceled":   func(c catalog.Catalog) catalog.Catalog { return canceledAfterCommit{c} },
	}
	for label, w := range wrap {
		for _, v := range []int{2, 3} {
			t.Run(fmt.Sprintf("%s-v%d", label, v), func(t *testing.T) {
				cat, before := ingested(t, v)
				_, err := runIceberg(t.Context(), w(cat), config("gis.c", pointsFile(t, 6)))
				require.Error(t, err)
				assert.False(t, errors.Is(err, catalogs.ErrConflict), "error %v must not be a conflict", err)
				after, err := catalogs.LoadTable(t.Context(), cat, "gis.c")
				require.NoError(t, err)
				require.NotEqual(t, before.CurrentSnapshot().SnapshotID, after.CurrentSnapshot().SnapshotID, "the catalog took the commit")
				committest.AssertReferencedExist(t, after)
				rows, err := after.Scan().ToArrowTable(t.Context())
				require.NoError(t, err)
				defer rows.Release()
				assert.Equal(t, int64(11), rows.NumRows())
			})
		}
	}
}
