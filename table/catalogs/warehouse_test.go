package catalogs_test

import (
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/table/catalogs"
)

// tree lists the files and directories under root (but not under skip),
// the files with their sizes and modification times.
func tree(t *testing.T, root, skip string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == skip {
			return filepath.SkipDir
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			out[p] = "dir" // its time changes when the warehouse is made in it
			return nil
		}
		out[p] = fmt.Sprintf("%s %s %d", info.ModTime().Format(time.RFC3339Nano), info.Mode(), info.Size())
		return nil
	}))
	return out
}

func closeCatalog(t *testing.T, cat catalog.Catalog) {
	t.Helper()
	if c, ok := cat.(io.Closer); ok {
		require.NoError(t, c.Close())
	}
}

// TestOpenOddWarehousePaths opens the embedded catalog on warehouse paths
// that mean something in a URI (space, non-ASCII, ?, #, %, an escaped
// slash, ..) next to another warehouse: the catalog database and the
// table's metadata must land exactly in the warehouse named, and the other
// warehouse must not be touched.
func TestOpenOddWarehousePaths(t *testing.T) {
	for _, name := range []string{"with space", "ünïcødé", "q?x=1", "h#frag", "pct%41", "a%2f..", "a%2f..%2f..", "x/../dotdot", "%"} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			other, err := catalogs.Open(t.Context(), catalogs.Spec{Warehouse: root})
			require.NoError(t, err)
			require.NoError(t, other.CreateNamespace(t.Context(), table.Identifier{"theirs"}, nil))
			closeCatalog(t, other)
			wh := filepath.Join(root, name)
			clean := filepath.Clean(wh)
			before := tree(t, root, clean)

			cat, err := catalogs.Open(t.Context(), catalogs.Spec{Warehouse: wh})
			require.NoError(t, err)
			require.NoError(t, cat.CreateNamespace(t.Context(), table.Identifier{"ours"}, nil))
			sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true})
			tbl, err := cat.CreateTable(t.Context(), table.Identifier{"ours", "t"}, sc)
			require.NoError(t, err)
			closeCatalog(t, cat)

			assert.FileExists(t, filepath.Join(clean, "catalog.db"))
			meta, err := filepath.Glob(filepath.Join(escapeGlob(clean), "ours.db", "t", "metadata", "*.metadata.json"))
			require.NoError(t, err)
			assert.Len(t, meta, 1, "table metadata under the warehouse; location %s", tbl.Location())
			assert.Equal(t, before, tree(t, root, clean), "nothing outside the warehouse changed")

			other, err = catalogs.Open(t.Context(), catalogs.Spec{Warehouse: root})
			require.NoError(t, err)
			defer closeCatalog(t, other)
			nss, err := other.ListNamespaces(t.Context(), nil)
			require.NoError(t, err)
			assert.Equal(t, []table.Identifier{{"theirs"}}, nss, "the other warehouse's catalog holds only its own")
		})
	}
}

// escapeGlob quotes the glob metacharacters of a literal path.
func escapeGlob(p string) string {
	return strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`).Replace(p)
}
