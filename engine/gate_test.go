package engine_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/delta/deltatest"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/internal/testing/enginetest"
	"github.com/geocompact/geocompact/table"
)

// gateCases wrong a commit's files the ways the commit gate refuses: a
// file holding fewer rows than its group read, and a file that lies
// outside the table.
var gateCases = []struct {
	name, kind string
	wrong      func(rs []table.Replacement)
}{
	{"rows", table.GateRows, func(rs []table.Replacement) { rs[0].New[0].Records-- }},
	{"place", table.GatePlace, func(rs []table.Replacement) {
		rs[0].New[0].Path = "file:///elsewhere/x.parquet"
		if a, ok := rs[0].New[0].File.(*delta.Add); ok {
			a.Path = "../elsewhere/x.parquet"
		}
	}},
}

// TestRewriteGateRefusesWrongFiles: a rewrite whose files do not hold the
// rows it read, or lie outside the table, commits nothing and leaves no
// file behind.
func TestRewriteGateRefusesWrongFiles(t *testing.T) {
	t.Parallel()
	for _, tc := range gateCases {
		t.Run(tc.name, func(t *testing.T) {
			cat, name := newTable(t, sqlite(t), bench.GenerateConfig{Rows: 1000, Commits: 4})
			tbl := mustLoad(t, cat, name)
			dir := strings.TrimPrefix(tbl.Location(), "file://")
			before, snap := dirFiles(t, dir), tbl.CurrentSnapshot().SnapshotID
			ctx := engine.WithTestHooks(t.Context(), engine.TestHooks{Replacements: tc.wrong})
			_, err := enginetest.Rewrite(ctx, cat, name, engine.Request{Curve: "hilbert", Options: opts("rewrite-all", "true")})
			ge, ok := errors.AsType[*table.GateError](err)
			require.True(t, ok, "err = %v, want a *table.GateError", err)
			assert.Equal(t, tc.kind, ge.Kind)
			after := mustLoad(t, cat, name)
			assert.Equal(t, snap, after.CurrentSnapshot().SnapshotID, "nothing committed")
			assert.Equal(t, before, dataOnly(dirFiles(t, dir), before), "no data file left")
		})
	}
}

// dataOnly returns got without the metadata files a refused commit may
// not have written at all: what is compared is every file before and the
// data files after.
func dataOnly(got, before []string) []string {
	return slices.DeleteFunc(slices.Clone(got), func(p string) bool {
		return !slices.Contains(before, p) && !strings.HasSuffix(p, ".parquet")
	})
}

// TestOptimizeGateRefusesWrongFiles is the gate on a Delta OPTIMIZE.
func TestOptimizeGateRefusesWrongFiles(t *testing.T) {
	t.Parallel()
	for _, tc := range gateCases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tbl := deltatest.Fragmented(t, dir, 6, 40, deltatest.Options{})
			version := deltatest.Snapshot(t, tbl).Version
			before := parquetFiles(t, dir)
			ctx := engine.WithTestHooks(t.Context(), engine.TestHooks{Replacements: tc.wrong})
			_, err := enginetest.RewriteDelta(ctx, dir, engine.Request{Curve: "hilbert", Options: opts("rewrite-all", "true")})
			ge, ok := errors.AsType[*table.GateError](err)
			require.True(t, ok, "err = %v, want a *table.GateError", err)
			assert.Equal(t, tc.kind, ge.Kind)
			assert.Equal(t, version, deltatest.Snapshot(t, tbl).Version, "nothing committed")
			assert.Equal(t, before, parquetFiles(t, dir), "no data file left")
		})
	}
}

func parquetFiles(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".parquet") {
			out = append(out, p)
		}
		return err
	}))
	slices.Sort(out)
	return out
}
