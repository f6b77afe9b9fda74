package catalogs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
)

// failingCatalog fails every commit with err, or takes it when err is nil.
type failingCatalog struct {
	catalog.Catalog
	err error
}

func (c failingCatalog) CommitTable(context.Context, table.Identifier, []table.Requirement, []table.Update) (table.Metadata, string, error) {
	return nil, "", c.err
}

// TestCommitTableClassifiesFailures: of the failures of a catalog's
// commit, only a refusal and a failed write of the metadata file it had
// yet to publish say that nothing was committed; every other failure,
// file errors included, leaves the outcome unknown. A commit taken is
// recorded in the context's trackers.
func TestCommitTableClassifiesFailures(t *testing.T) {
	metadata := &WriteError{Path: "/w/t/metadata/00002-x.metadata.json", Err: syscall.ENOSPC}
	hint := &WriteError{Path: "/w/t/metadata/version-hint.text", Err: syscall.ENOSPC}
	tests := []struct {
		name                    string
		err                     error
		refused, write, unknown bool
	}{
		{"refused", fmt.Errorf("%w: moved underneath us", table.ErrCommitFailed), true, false, false},
		{"stale base", errors.New("requirement failed: branch main has changed"), true, false, false},
		{"metadata write", fmt.Errorf("write metadata: %w", metadata), false, true, false},
		{"write after publishing", fmt.Errorf("version hint: %w", hint), false, false, true},
		{"journal", &fs.PathError{Op: "write", Path: "/w/catalog.db-journal", Err: syscall.EIO}, false, false, true},
		{"lost reply", context.DeadlineExceeded, false, false, true},
		{"canceled", context.Canceled, false, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, files := TrackFiles(t.Context())
			_, _, err := commitTable(ctx, failingCatalog{err: tc.err}, table.Identifier{"a", "b"}, nil, nil)
			assert.ErrorIs(t, err, tc.err)
			assert.Equal(t, tc.refused, IsRetryable(err), "IsRetryable(%v)", err)
			assert.Equal(t, tc.write, FailedWrite(err), "FailedWrite(%v)", err)
			assert.Equal(t, tc.unknown, OutcomeUnknown(err), "OutcomeUnknown(%v)", err)
			assert.Equal(t, !tc.unknown, NothingCommitted(err), "NothingCommitted(%v)", err)
			assert.False(t, files.Taken())
		})
	}
	outer, parent := TrackFiles(t.Context())
	ctx, files := TrackFiles(outer)
	_, _, err := commitTable(ctx, failingCatalog{}, table.Identifier{"a", "b"}, nil, nil)
	assert.NoError(t, err)
	assert.True(t, files.Taken())
	assert.True(t, parent.Taken(), "an enclosing tracker sees the commit taken")
}
