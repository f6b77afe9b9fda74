package engine_test

import (
	"context"
	"errors"
	"io/fs"
	"path"
	"syscall"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/internal/faultio"
	"github.com/geocompact/geocompact/internal/testing/committest"
	"github.com/geocompact/geocompact/internal/testing/enginetest"
	"github.com/geocompact/geocompact/internal/testing/testenv"
	"github.com/geocompact/geocompact/table/catalogs"
)

// failAfterCommitCatalog takes every commit and then fails with a local
// file error, as a catalog whose step after publishing the new metadata
// (its database's journal, a version hint, a copy of the metadata file)
// meets a full disk or an I/O error.
type failAfterCommitCatalog struct {
	catalog.Catalog
	after func(ctx context.Context, loc string) error
}

func (c failAfterCommitCatalog) CommitTable(ctx context.Context, ident table.Identifier, reqs []table.Requirement, updates []table.Update) (table.Metadata, string, error) {
	_, loc, err := c.Catalog.CommitTable(ctx, ident, reqs, updates)
	if err != nil {
		return nil, "", err
	}
	return nil, "", c.after(ctx, loc)
}

// writeFull writes a file beside the metadata file loc through the
// table's tracked FileIO on a full disk, and returns its failure.
func writeFull(ctx context.Context, loc, name string) error {
	ctx = faultio.With(ctx, &faultio.Fault{Err: faultio.ENOSPC})
	fsys, err := iceio.LoadFS(ctx, nil, loc)
	if err != nil {
		return err
	}
	return fsys.(iceio.WriteFileIO).WriteFile(path.Join(path.Dir(loc), name), []byte("1"))
}

// TestFileErrorAfterCommitDeletesNothing: a commit the catalog took and
// that then failed with a local file error is not taken as "nothing
// committed": the rewrite fails without a conflict and deletes nothing
// the table now references, which reads the same rows.
func TestFileErrorAfterCommitDeletesNothing(t *testing.T) {
	after := map[string]func(ctx context.Context, loc string) error{
		"journal-eio": func(_ context.Context, loc string) error {
			return &fs.PathError{Op: "write", Path: path.Join(path.Dir(loc), "catalog.db-journal"), Err: syscall.EIO}
		},
		"version-hint-enospc": func(ctx context.Context, loc string) error {
			return writeFull(ctx, loc, "version-hint.text")
		},
		"metadata-copy-enospc": func(ctx context.Context, loc string) error {
			return writeFull(ctx, loc, "copy.metadata.json")
		},
	}
	for label, fail := range after {
		t.Run(label, func(t *testing.T) {
			eachCatalog(t, func(t *testing.T, c testenv.Catalog) {
				inner, name := newTable(t, c, bench.GenerateConfig{Rows: 2000, Commits: 6})
				before := tableDigest(t, mustLoad(t, inner, name))
				_, err := enginetest.Rewrite(t.Context(), failAfterCommitCatalog{inner, fail}, name, engine.Request{Curve: "hilbert"})
				require.Error(t, err)
				assert.True(t, errors.Is(err, syscall.EIO) || errors.Is(err, syscall.ENOSPC), "error %v, want the injected one", err)
				assert.False(t, errors.Is(err, catalogs.ErrConflict), "error %v must not be a conflict", err)
				assert.False(t, catalogs.NothingCommitted(err), "error %v must not say nothing was committed", err)

				after := mustLoad(t, inner, name)
				require.Equal(t, table.OpReplace, after.CurrentSnapshot().Summary.Operation)
				committest.AssertReferencedExist(t, after)
				assert.Equal(t, before, tableDigest(t, after))
			})
		})
	}
}
