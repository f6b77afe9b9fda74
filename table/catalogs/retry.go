package catalogs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// ErrConflict marks a commit that lost to a concurrent writer and could not
// be replayed within the retry budget. The table is unchanged; the
// operation is safe to run again. The CLI exits 4 on it.
var ErrConflict = errors.New("engine: commit conflict")

// retryCatalog wraps a catalog so that the sql and hadoop catalogs' plain
// "requirement failed" errors, raised when another writer moved the branch
// between our read and our commit, wrap table.ErrCommitFailed like every
// other catalog's stale-base error. Tables it loads or creates commit
// through it.
type retryCatalog struct {
	catalog.Catalog
}

// Wrap returns c wrapped as described at retryCatalog; it is a no-op
// on a catalog already wrapped. Every operation that commits takes its
// catalog through it, so its retries see one kind of conflict error.
func Wrap(c catalog.Catalog) catalog.Catalog {
	if _, ok := c.(*retryCatalog); ok {
		return c
	}
	return &retryCatalog{Catalog: c}
}

// CommitTable forwards to the wrapped catalog and maps a stale-base
// requirement failure to table.ErrCommitFailed; any other failure but one
// writing the metadata file is marked OutcomeUnknown (see commitTable). A
// commit that fails writing its metadata file, or that the catalog
// refuses, deletes what it wrote of it.
func (c *retryCatalog) CommitTable(ctx context.Context, ident table.Identifier, reqs []table.Requirement, updates []table.Update) (table.Metadata, string, error) {
	var meta table.Metadata
	var loc string
	err := RemoveOnFailedWrite(ctx, c.Catalog, ident, func(ctx context.Context) error {
		var err error
		meta, loc, err = commitTable(ctx, c.Catalog, ident, reqs, updates)
		return err
	})
	return meta, loc, err
}

// LoadTable loads through the wrapped catalog and binds the table's commits
// to c.
func (c *retryCatalog) LoadTable(ctx context.Context, ident table.Identifier) (*table.Table, error) {
	t, err := c.Catalog.LoadTable(ctx, ident)
	if err != nil {
		return nil, err
	}
	return c.rebind(t), nil
}

// CreateTable creates through the wrapped catalog and binds the table's
// commits to c.
func (c *retryCatalog) CreateTable(ctx context.Context, ident table.Identifier, sc *iceberg.Schema, opts ...catalog.CreateTableOpt) (*table.Table, error) {
	t, err := c.Catalog.CreateTable(ctx, ident, sc, opts...)
	if err != nil {
		return nil, err
	}
	return c.rebind(t), nil
}

func (c *retryCatalog) rebind(t *table.Table) *table.Table {
	return table.New(t.Identifier(), t.Metadata(), t.MetadataLocation(), t.FS, c)
}

// isStaleBase reports whether err is a catalog's report that a commit
// requirement (the branch head, the table UUID, ...) no longer holds.
func isStaleBase(err error) bool {
	s := err.Error()
	return strings.Contains(s, "requirement failed") || strings.Contains(s, "has changed")
}

// IsRetryable reports whether err means "another writer got there first":
// the table is unchanged and the operation may be run again. Besides lost
// commit races this covers iceberg-go's conflict validation finding that
// a concurrent expire removed the commit's base snapshot
// (table.ErrCommitDiverged) or the manifests of a snapshot committed
// meanwhile: validation runs before the catalog commit, and iceberg-go asks
// the committer to rebuild from a fresh base, which a retry does. A
// failure whose outcome is unknown (OutcomeUnknown) is never retryable.
func IsRetryable(err error) bool {
	if OutcomeUnknown(err) {
		return false
	}
	return errors.Is(err, table.ErrCommitFailed) || errors.Is(err, ErrConflict) ||
		errors.Is(err, table.ErrCommitDiverged) || lostConcurrentManifest(err)
}

// lostConcurrentManifest recognises iceberg-go's conflict validation failing
// to read a concurrent snapshot's manifests because an expire removed them.
func lostConcurrentManifest(err error) bool {
	return errors.Is(err, fs.ErrNotExist) && strings.Contains(err.Error(), "for concurrent snapshot")
}

// WithCommitRetry runs attempt until it succeeds, fails with an error
// other than table.ErrCommitFailed (a lost race with another writer), or
// has been retried retries times (0 means 4, negative none; a failure
// whose outcome is unknown is never retried); it waits with
// jittered exponential backoff in between. attempt must start from a fresh
// load of the table each time. An exhausted budget returns an error that
// wraps ErrConflict. An attempt that finds the table changed in a way a
// retry cannot fix returns ErrConflict itself, which is not retried.
func WithCommitRetry(ctx context.Context, retries int, attempt func(ctx context.Context) error) error {
	retries = Spec{CommitRetries: retries}.Retries()
	wait := 50 * time.Millisecond
	for i := 0; ; i++ {
		err := attempt(ctx)
		if err == nil || !errors.Is(err, table.ErrCommitFailed) || OutcomeUnknown(err) {
			return err
		}
		if i >= retries {
			if errors.Is(err, ErrConflict) {
				return err
			}
			return fmt.Errorf("%w after %d retries: %w", ErrConflict, retries, err)
		}
		d := wait + rand.N(wait)
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-time.After(d):
		}
		wait = min(2*wait, 5*time.Second)
	}
}
