package bench

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	format "github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/catalogs"
)

// TestGenerateGateRefuses: a generated batch whose files do not hold its
// rows, or lie outside the table, is not committed, and its files are
// deleted.
func TestGenerateGateRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, kind string
		wrong      func(*format.GateGroup)
	}{
		{"rows", format.GateRows, func(g *format.GateGroup) { g.Files[0].Records++ }},
		{"place", format.GatePlace, func(g *format.GateGroup) { g.Files[0].Path = "/elsewhere/x.parquet" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wh := t.TempDir()
			cat, err := catalogs.Open(t.Context(), catalogs.Spec{Warehouse: wh})
			require.NoError(t, err)
			tamperGenerateGate = tc.wrong
			defer func() { tamperGenerateGate = nil }()
			_, err = Generate(t.Context(), cat, GenerateConfig{Table: "g.gate", Rows: 100, Commits: 2, Seed: 1})
			ge, ok := errors.AsType[*format.GateError](err)
			require.True(t, ok, "err = %v, want a *table.GateError", err)
			assert.Equal(t, tc.kind, ge.Kind)
			var left []string
			require.NoError(t, filepath.WalkDir(wh, func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() && strings.HasSuffix(p, ".parquet") {
					left = append(left, p)
				}
				return err
			}))
			assert.Empty(t, left, "a refused batch left its data files")
		})
	}
}
