// Package committest has catalogs that lose every commit race or lose the
// reply to a commit they took, and checks of what a failed commit left
// behind, for the tests of every command that commits.
package committest

import (
	"context"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Racing is a catalog whose every commit loses the race: just before
// forwarding it, another writer appends a copy of one of the table's rows
// through the wrapped catalog, so the commit's base is stale and the
// catalog refuses it.
type Racing struct {
	catalog.Catalog
	// Commits counts the commits asked of it.
	Commits atomic.Int32
	// Appended counts the rows the other writer appended.
	Appended atomic.Int64
}

// CommitTable implements catalog.Catalog.
func (c *Racing) CommitTable(ctx context.Context, ident table.Identifier, reqs []table.Requirement, updates []table.Update) (table.Metadata, string, error) {
	c.Commits.Add(1)
	// The other writer is another process: its files are not the
	// commit's, so it runs under a context of its own.
	other := context.Background()
	tbl, err := c.Catalog.LoadTable(other, ident)
	if err != nil {
		return nil, "", err
	}
	rows, err := tbl.Scan(table.WithLimit(1)).ToArrowTable(other)
	if err != nil {
		return nil, "", err
	}
	defer rows.Release()
	if _, err := tbl.AppendTable(other, rows, rows.NumRows(), nil); err != nil {
		return nil, "", err
	}
	c.Appended.Add(rows.NumRows())
	return c.Catalog.CommitTable(ctx, ident, reqs, updates)
}

// LostReply is a catalog that takes every commit and then reports a
// timeout, as when the reply to a commit is lost: its outcome is unknown
// to the committer.
type LostReply struct {
	catalog.Catalog
}

// CommitTable implements catalog.Catalog.
func (c LostReply) CommitTable(ctx context.Context, ident table.Identifier, reqs []table.Requirement, updates []table.Update) (table.Metadata, string, error) {
	if _, _, err := c.Catalog.CommitTable(ctx, ident, reqs, updates); err != nil {
		return nil, "", err
	}
	return nil, "", fmt.Errorf("commit %v: reply lost: %w", ident, context.DeadlineExceeded)
}

// AssertNoStrayFiles checks that every file under tbl's location is
// reached from its metadata.
func AssertNoStrayFiles(t *testing.T, tbl *table.Table) {
	t.Helper()
	refs := Referenced(t, tbl)
	var stray []string
	root := strings.TrimPrefix(tbl.Location(), "file://")
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !refs[p] {
			stray = append(stray, p)
		}
		return err
	}))
	assert.Empty(t, stray, "files no snapshot references (referenced: %v)", slices.Sorted(maps.Keys(refs)))
}

// AssertReferencedExist checks that every file tbl's metadata reaches
// exists.
func AssertReferencedExist(t *testing.T, tbl *table.Table) {
	t.Helper()
	for f := range Referenced(t, tbl) {
		assert.FileExists(t, f)
	}
}

// Referenced returns the local paths of every file tbl's metadata
// reaches: its metadata files, and every snapshot's manifest list,
// manifests and data and delete files (deleted entries included).
func Referenced(t *testing.T, tbl *table.Table) map[string]bool {
	t.Helper()
	refs := map[string]bool{}
	add := func(p string) { refs[strings.TrimPrefix(p, "file://")] = true }
	add(tbl.MetadataLocation())
	for e := range tbl.Metadata().PreviousFiles() {
		add(e.MetadataFile)
	}
	fsys, err := tbl.FS(t.Context())
	require.NoError(t, err)
	for _, s := range tbl.Metadata().Snapshots() {
		add(s.ManifestList)
		manifests, err := s.Manifests(fsys)
		require.NoError(t, err)
		for _, m := range manifests {
			add(m.FilePath())
			entries, err := m.FetchEntries(fsys, false)
			require.NoError(t, err)
			for _, e := range entries {
				add(e.DataFile().FilePath())
			}
		}
	}
	return refs
}
