package alter_test

import (
	"errors"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/alter"
	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/internal/testing/enginetest"
	"github.com/geocompact/geocompact/internal/testing/testenv"
	format "github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/table/icebergtable"
	"github.com/geocompact/geocompact/table/layouts"
	"github.com/geocompact/geocompact/table/optval"
)

// opened is the table called name in cat, opened as the alter command
// opens it.
func opened(t *testing.T, cat catalog.Catalog, name string) format.Table {
	t.Helper()
	tbl, err := icebergtable.Open(t.Context(), cat, name)
	require.NoError(t, err)
	return tbl
}

// TestAlterRoundTrip records a column order (as the Iceberg sort order),
// a curve (as the property), size properties with units (as byte counts),
// and removes them again.
func TestAlterRoundTrip(t *testing.T) {
	cat, name := newTable(t, bench.GenerateConfig{Rows: 300, Commits: 3})
	ctx := t.Context()

	res, err := alter.Apply(ctx, opened(t, cat, name), alter.Request{SortOrder: "bbox_minx DESC, id",
		Set: map[string]string{"write.target-file-size-bytes": "128MiB", "commit.manifest.target-size-bytes": "1GB", "owner": "gis"}})
	require.NoError(t, err)
	assert.Equal(t, "bbox_minx DESC NULLS LAST, id ASC NULLS FIRST", res.SortOrder)
	assert.Equal(t, layouts.Record{Text: res.SortOrder, Source: layouts.FromSortOrder}, res.Layout)
	tbl := load(t, cat, name)
	assert.Equal(t, "134217728", tbl.Properties()["write.target-file-size-bytes"])
	assert.Equal(t, "1000000000", tbl.Properties()["commit.manifest.target-size-bytes"])
	assert.Equal(t, "gis", tbl.Properties()["owner"])
	so := tbl.SortOrder()
	require.Equal(t, 2, so.Len())
	assert.Equal(t, table.SortDESC, so.Field(0).Direction)
	assert.NotContains(t, tbl.Properties(), layouts.Prop)

	res, err = alter.Apply(ctx, opened(t, cat, name), alter.Request{Curve: "Hilbert", Unset: []string{"owner"}})
	require.NoError(t, err)
	assert.Equal(t, layouts.Record{Text: "hilbert()", Source: layouts.FromProperty}, res.Layout)
	tbl = load(t, cat, name)
	assert.Equal(t, "hilbert()", tbl.Properties()[layouts.Prop])
	assert.True(t, tbl.SortOrder().IsUnsorted(), "a curve resets the Iceberg sort order")
	assert.NotContains(t, tbl.Properties(), "owner")

	res, err = alter.Apply(ctx, opened(t, cat, name), alter.Request{Curve: "auto"})
	require.NoError(t, err)
	assert.Equal(t, "auto", res.Layout.Text)

	_, err = alter.Apply(ctx, opened(t, cat, name), alter.Request{SortOrder: "zorder(bbox_minx, bbox_maxy)"})
	require.NoError(t, err)
	assert.Equal(t, "zorder(bbox_minx, bbox_maxy)", load(t, cat, name).Properties()[layouts.Prop])

	res, err = alter.Apply(ctx, opened(t, cat, name), alter.Request{Curve: "linear"})
	require.NoError(t, err)
	assert.Equal(t, layouts.FromSortOrder, res.Layout.Source, "linear over the bbox columns is a plain sort order")
	assert.NotContains(t, load(t, cat, name).Properties(), layouts.Prop)

	_, err = alter.Apply(ctx, opened(t, cat, name), alter.Request{Unset: []string{layouts.Prop}, Set: map[string]string{"gc.enabled": "true"}})
	require.NoError(t, err)
	rec, err := icebergtable.Layout(load(t, cat, name))
	require.NoError(t, err)
	assert.Equal(t, layouts.FromSortOrder, rec.Source, "unsetting the property leaves the Iceberg sort order")
}

// TestAlterRefusesBadInput names the problem and changes nothing.
func TestAlterRefusesBadInput(t *testing.T) {
	cat, name := newTable(t, bench.GenerateConfig{Rows: 100, Commits: 1})
	before := load(t, cat, name).Metadata()
	for _, tc := range []struct {
		name string
		req  alter.Request
		want string
	}{
		{"unknown curve", alter.Request{Curve: "hilbrt"}, "did you mean hilbert?"},
		{"auto misspelt", alter.Request{Curve: "autoo"}, "did you mean auto?"},
		{"missing column", alter.Request{SortOrder: "bbox_minx, tss"}, `no column "tss"; its columns are id, ts, device_id`},
		{"curve and order", alter.Request{Curve: "hilbert", SortOrder: "id"}, "not both"},
		{"nothing", alter.Request{}, "nothing to alter"},
		{"bad size", alter.Request{Set: map[string]string{"write.target-file-size-bytes": "12XB"}}, "write.target-file-size-bytes"},
		{"zero size", alter.Request{Set: map[string]string{"write.target-file-size-bytes": "0"}}, "positive"},
		{"huge size", alter.Request{Set: map[string]string{"write.target-file-size-bytes": "1000000TiB"}}, "write.target-file-size-bytes=\"1000000TiB\": want at most 1024TiB"},
		{"size past int64", alter.Request{Set: map[string]string{"write.target-file-size-bytes": "9223372036854775808"}}, "exceeds the largest size, 9223372036854775807 bytes"},
		{"misspelt key", alter.Request{Set: map[string]string{"write.target-file-size": "1MiB"}}, "did you mean write.target-file-size-bytes?"},
		{"set and unset", alter.Request{Set: map[string]string{"owner": "a"}, Unset: []string{"owner"}}, "both set and unset"},
		{"bad layout property", alter.Request{Set: map[string]string{layouts.Prop: "hilbert("}}, layouts.Prop},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := alter.Apply(t.Context(), opened(t, cat, name), tc.req)
			require.ErrorIs(t, err, optval.ErrBad)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	assert.Equal(t, before.LastUpdatedMillis(), load(t, cat, name).Metadata().LastUpdatedMillis(), "nothing was committed")
}

// newTable generates a table in a fresh SQLite catalog: alter does not
// depend on the catalog backend.
func newTable(t *testing.T, cfg bench.GenerateConfig) (catalog.Catalog, string) {
	t.Helper()
	for _, c := range testenv.Catalogs(t) {
		if c.Backend != "sqlite" {
			continue
		}
		cat, _ := c.Open(t)
		cfg.Table, cfg.Seed = "geo.t", 7
		_, err := bench.Generate(t.Context(), cat, cfg)
		require.NoError(t, err)
		return cat, cfg.Table
	}
	t.Fatal("no sqlite catalog")
	return nil, ""
}

func load(t *testing.T, cat catalog.Catalog, name string) *table.Table {
	t.Helper()
	tbl, err := catalogs.LoadTable(t.Context(), cat, name)
	require.NoError(t, err)
	return tbl
}

// TestAlterUnsorted resets a sort order and a recorded curve to no
// layout in one commit each, and a rewrite without layout flags then
// bin-packs as on a table that never recorded one.
func TestAlterUnsorted(t *testing.T) {
	cat, name := newTable(t, bench.GenerateConfig{Rows: 300, Commits: 3})
	ctx := t.Context()

	_, err := alter.Apply(ctx, opened(t, cat, name), alter.Request{SortOrder: "bbox_minx DESC, id"})
	require.NoError(t, err)
	require.False(t, load(t, cat, name).SortOrder().IsUnsorted())
	res, err := alter.Apply(ctx, opened(t, cat, name), alter.Request{Unsorted: true, Set: map[string]string{"owner": "gis"}})
	require.NoError(t, err)
	assert.Equal(t, layouts.Record{}, res.Layout)
	assert.Empty(t, res.SortOrder)
	assert.Empty(t, res.Unset, "no property to remove")
	tbl := load(t, cat, name)
	assert.True(t, tbl.SortOrder().IsUnsorted())
	assert.Equal(t, "gis", tbl.Properties()["owner"], "properties go in the same commit")

	_, err = alter.Apply(ctx, opened(t, cat, name), alter.Request{Curve: "hilbert"})
	require.NoError(t, err)
	snaps := len(load(t, cat, name).Metadata().Snapshots())
	res, err = alter.Apply(ctx, opened(t, cat, name), alter.Request{Unsorted: true})
	require.NoError(t, err)
	assert.Equal(t, []string{layouts.Prop}, res.Unset)
	tbl = load(t, cat, name)
	assert.NotContains(t, tbl.Properties(), layouts.Prop)
	assert.True(t, tbl.SortOrder().IsUnsorted())
	assert.Len(t, tbl.Metadata().Snapshots(), snaps, "alter adds no snapshot")

	rw, err := enginetest.Rewrite(ctx, cat, name, engine.Request{Options: map[string]string{"rewrite-all": "true"}})
	require.NoError(t, err, "no recorded layout to protect: binpack needs no --allow-layout-change")
	assert.Equal(t, string(engine.BinPack), rw.Strategy)
	assert.Equal(t, layouts.FromDefault, rw.LayoutSource)
	assert.Empty(t, rw.SortOrder)
}

// TestAlterUnsortedConflicts: --unsorted with a layout is refused before
// the table is touched.
func TestAlterUnsortedConflicts(t *testing.T) {
	cat, name := newTable(t, bench.GenerateConfig{Rows: 100, Commits: 1})
	_, err := alter.Apply(t.Context(), opened(t, cat, name), alter.Request{Curve: "hilbert"})
	require.NoError(t, err)
	before := load(t, cat, name).Metadata()
	for _, req := range []alter.Request{
		{Unsorted: true, Curve: "zorder"},
		{Unsorted: true, SortOrder: "id"},
		{Unsorted: true, Set: map[string]string{layouts.Prop: "zorder()"}},
	} {
		_, err := alter.Apply(t.Context(), opened(t, cat, name), req)
		require.ErrorIs(t, err, optval.ErrBad, "%+v", req)
		assert.Contains(t, err.Error(), "unsorted ", "%+v", req)
		assert.True(t, errors.Is(err, alter.ErrUnsortedAndLayout) || errors.Is(err, alter.ErrUnsortedAndProp), "%+v", req)
		require.ErrorIs(t, alter.Validate(t.Context(), opened(t, cat, name), req), optval.ErrBad)
	}
	after := load(t, cat, name)
	assert.Equal(t, before.LastUpdatedMillis(), after.Metadata().LastUpdatedMillis(), "nothing was committed")
	assert.Equal(t, "hilbert()", after.Properties()[layouts.Prop])
}

// TestPrecheck refuses, without a table, what no format's rules change,
// and leaves property keys to the table's rules.
func TestPrecheck(t *testing.T) {
	for _, req := range []alter.Request{
		{},
		{Curve: "hilbert", SortOrder: "id"},
		{Unsorted: true, Curve: "zorder"},
		{Curve: "hilbrt"},
	} {
		require.ErrorIs(t, req.Precheck(), optval.ErrBad, "%+v", req)
	}
	require.NoError(t, alter.Request{Set: map[string]string{"delta.targetFileSiz": "1"}}.Precheck())
}
