package bench

import (
	"cmp"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/cluster"
	"github.com/geocompact/geocompact/spatial"
)

func cmpBound(a, b spatial.Bound) int {
	return cmp.Or(cmp.Compare(a.MinX, b.MinX), cmp.Compare(a.MinY, b.MinY), cmp.Compare(a.MaxX, b.MaxX), cmp.Compare(a.MaxY, b.MaxY))
}

// TestRowBoundsMatchGenerate checks that RowBounds gives the boxes of the
// rows Generate writes for the same config.
func TestRowBoundsMatchGenerate(t *testing.T) {
	t.Parallel()
	cat := newCatalog(t)
	cfg := GenerateConfig{Table: "g.rows", Rows: 700, Commits: 3, Geometry: Polygons, Distribution: Clustered, Seed: 11}
	_, err := Generate(t.Context(), cat, cfg)
	require.NoError(t, err)
	tbl, err := cat.LoadTable(t.Context(), []string{"g", "rows"})
	require.NoError(t, err)
	cols, err := columnsOf(tbl.Schema(), tbl.Properties())
	require.NoError(t, err)
	files, err := readFiles(t.Context(), tbl, cols)
	require.NoError(t, err)
	var written []spatial.Bound
	for _, f := range files {
		written = append(written, f.rows...)
	}
	cfg.Table, cfg.Commits = "", 0 // they do not change the rows
	got, err := RowBounds(cfg)
	require.NoError(t, err)
	require.Len(t, got, 700)
	slices.SortFunc(written, cmpBound)
	assert.Equal(t, written, slices.SortedFunc(slices.Values(got), cmpBound))

	_, err = RowBounds(GenerateConfig{Rows: 0})
	assert.ErrorIs(t, err, ErrGenerate)
}

// TestChooseOnClusteredPoints is the automatic choice on generated
// clustered points: the plain (minx, miny) sort at a few files, a
// two-dimensional layout (hilbert or str) at hundreds. (Between about 5
// and 20 files linear and str come within a few percent of each other on
// this data and either may win.)
func TestChooseOnClusteredPoints(t *testing.T) {
	t.Parallel()
	sample, err := RowBounds(GenerateConfig{Rows: 1 << 16, Distribution: Clustered, Seed: 1})
	require.NoError(t, err)
	curves := []string{"linear", "zorder", "hilbert", "str"}
	for _, files := range []int{4, 8} {
		few, err := cluster.Choose(sample, cluster.ChooseConfig{Files: files, Extent: spatial.World, Candidates: curves})
		require.NoError(t, err)
		assert.Equal(t, "linear", few.Curve, "%d files: %+v", files, few.Estimates)
	}
	many, err := cluster.Choose(sample, cluster.ChooseConfig{Files: 500, Extent: spatial.World, Candidates: curves})
	require.NoError(t, err)
	assert.Contains(t, []string{"hilbert", "str"}, many.Curve, "%+v", many.Estimates)
	// kd, a candidate by default, is estimated to beat every curve at
	// both ends on this data.
	for _, files := range []int{4, 500} {
		ch, err := cluster.Choose(sample, cluster.ChooseConfig{Files: files, Extent: spatial.World})
		require.NoError(t, err)
		assert.Equal(t, "kd", ch.Curve, "%d files: %+v", files, ch.Estimates)
		again, err := cluster.Choose(sample, cluster.ChooseConfig{Files: files, Extent: spatial.World})
		require.NoError(t, err)
		assert.Equal(t, ch, again, "deterministic")
	}
}
