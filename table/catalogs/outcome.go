package catalogs

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// A commit is refused by the catalog (table.ErrCommitFailed), fails before
// the catalog is asked, or fails after the catalog was asked. Only the
// first two leave the table surely unchanged: once the catalog has been
// asked, any failure but its refusal (a lost reply, a database or disk
// error of the catalog, a step after it took the commit) leaves the
// outcome unknown, and deleting what the commit adds could break a
// snapshot the table now names. The catalog Wrap returns marks those
// failures (OutcomeUnknown), and CommitTracked marks a failure after a
// commit the catalog took in the same attempt.

// WriteError is a local file that the tracked FileIO (see TrackFiles)
// failed to create or write: a full disk, an I/O error.
type WriteError struct {
	Path string
	Err  error
}

func (e *WriteError) Error() string { return e.Err.Error() }

func (e *WriteError) Unwrap() error { return e.Err }

// unknownOutcome is a failure of a commit the catalog may have taken.
type unknownOutcome struct{ error }

func (e unknownOutcome) Unwrap() error { return e.error }

// markUnknown marks err as a failure of a commit whose outcome is unknown.
func markUnknown(err error) error {
	if err == nil || OutcomeUnknown(err) {
		return err
	}
	return unknownOutcome{err}
}

// OutcomeUnknown reports whether err is a commit failure the catalog may
// have taken: its files must be kept (orphan cleanup removes them if it
// did not take it), and it must not be retried.
func OutcomeUnknown(err error) bool {
	_, ok := errors.AsType[unknownOutcome](err)
	return ok
}

// NothingCommitted reports whether err, the failure of a commit attempt,
// surely left the table unchanged: the catalog refused it, or a file of
// it failed to be written before the catalog was asked (IsRetryable,
// FailedWrite). The files the attempt would have added may be deleted.
func NothingCommitted(err error) bool {
	return err != nil && (IsRetryable(err) || FailedWrite(err))
}

// commitTable asks cat to commit and classifies its failure: a refusal
// wraps table.ErrCommitFailed; a failure writing the new metadata file is
// left as it is (every catalog publishes a metadata file's location only
// after writing it whole); anything else is marked OutcomeUnknown. A
// commit the catalog takes is recorded in ctx's trackers.
func commitTable(ctx context.Context, cat catalog.Catalog, ident table.Identifier, reqs []table.Requirement, updates []table.Update) (table.Metadata, string, error) {
	meta, loc, err := cat.CommitTable(ctx, ident, reqs, updates)
	switch {
	case err == nil:
		if f, ok := ctx.Value(filesKey{}).(*Files); ok {
			f.setTaken()
		}
	case errors.Is(err, table.ErrCommitFailed):
	case isStaleBase(err):
		err = fmt.Errorf("%w: %w", table.ErrCommitFailed, err)
	case !metadataWriteFailed(err):
		err = markUnknown(err)
	}
	return meta, loc, err
}

// metadataWriteFailed reports whether err is the tracked FileIO's failure
// to write a metadata file.
func metadataWriteFailed(err error) bool {
	we, ok := errors.AsType[*WriteError](err)
	return ok && strings.HasSuffix(path.Base(we.Path), ".metadata.json")
}

// CommitRetried commits the table called name in cat as WithCommitRetry
// does, each try under CommitTracked: a try the catalog refuses, or that
// fails writing a file before the catalog is asked, deletes what it
// wrote; one that commits deletes what its refused replays wrote; a
// failure whose outcome is unknown deletes nothing and is not retried.
// attempt must start from a fresh load of the table and return the table
// it committed.
func CommitRetried(ctx context.Context, cat catalog.Catalog, name string, retries int, attempt func(ctx context.Context) (*table.Table, error)) error {
	ident, err := ParseIdentifier(name)
	if err != nil {
		return err
	}
	return WithCommitRetry(ctx, retries, func(ctx context.Context) error {
		return CommitTracked(ctx, cat, ident, attempt)
	})
}
