package layouts_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/cluster"
	"github.com/geocompact/geocompact/table/layouts"
	"github.com/geocompact/geocompact/table/optval"
)

// TestRecordedLayoutRoundTrip writes each layout as the property records
// it (Text of what Parse read) and reads it back: the record is the same
// canonical text, from the property, and reading it again changes nothing.
func TestRecordedLayoutRoundTrip(t *testing.T) {
	t.Parallel()
	cases := []struct{ given, text string }{
		{"hilbert", "hilbert()"},
		{" HILBERT ", "hilbert()"},
		{"zorder", "zorder()"},
		{"str", "str()"},
		{"kd", "kd()"},
		{"auto", "auto"},
		{"Auto", "auto"},
		{"linear", "bbox_minx ASC NULLS LAST, bbox_miny ASC NULLS LAST"},
		{"hilbert()", "hilbert()"},
		{"zorder(bbox_minx, bbox_miny)", "zorder(bbox_minx, bbox_miny)"},
		{"hilbert(geom)", "hilbert(geom)"},
		{"ts DESC, id", "ts DESC NULLS LAST, id ASC NULLS FIRST"},
	}
	for _, tc := range cases {
		t.Run(tc.given, func(t *testing.T) {
			t.Parallel()
			o, auto, err := layouts.Parse(tc.given)
			require.NoError(t, err)
			text := layouts.Text(o, auto)
			assert.Equal(t, tc.text, text)

			rec, ok, err := layouts.FromProperties("db.t", map[string]string{layouts.Prop: text, "other": "x"})
			require.NoError(t, err)
			require.True(t, ok)
			assert.Equal(t, layouts.Record{Text: tc.text, Source: layouts.FromProperty}, rec)

			given, ok, err := layouts.FromProperties("db.t", map[string]string{layouts.Prop: tc.given})
			require.NoError(t, err)
			require.True(t, ok)
			assert.Equal(t, rec, given, "the value as given reads as its canonical text")
		})
	}
}

func TestNoRecordedLayout(t *testing.T) {
	t.Parallel()
	for _, props := range []map[string]string{nil, {}, {"other": "hilbert"}, {layouts.Prop: ""}, {layouts.Prop: "  "}} {
		rec, ok, err := layouts.FromProperties("db.t", props)
		require.NoError(t, err, "%v", props)
		assert.False(t, ok, "%v", props)
		assert.Equal(t, layouts.Record{}, rec)
	}
}

func TestBadRecordedLayoutRefused(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"spiral()", "zorder(", "zorder(bbox_minx,", "hilbert(bbox_minx"} {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			rec, ok, err := layouts.FromProperties("db.t", map[string]string{layouts.Prop: v})
			require.Error(t, err)
			assert.False(t, ok)
			assert.Equal(t, layouts.Record{}, rec)
			assert.ErrorIs(t, err, optval.ErrBad)
			assert.ErrorIs(t, err, cluster.ErrSortOrder)
			msg := err.Error()
			assert.Contains(t, msg, "table db.t")
			assert.Contains(t, msg, `property geocompact.layout="`+v+`"`, "the message names the property and its value")
			assert.Contains(t, msg, "remove property geocompact.layout", "the message says how to mend it")
			pe, ok := errors.AsType[*layouts.PropertyError](err)
			require.True(t, ok, "the error carries its facts")
			assert.Equal(t, v, pe.Value)
		})
	}
}

func TestParseReadsCurveNames(t *testing.T) {
	t.Parallel()
	for _, name := range cluster.CurveNames() {
		o, auto, err := layouts.Parse(" " + strings.ToUpper(name))
		require.NoError(t, err, name)
		want, wantAuto, err := cluster.ParseCurve(name)
		require.NoError(t, err)
		assert.Equal(t, wantAuto, auto, name)
		assert.Equal(t, want.String(), o.String(), name)
		assert.Equal(t, name == cluster.CurveAuto, auto, name)
	}
	o, auto, err := layouts.Parse("hilbert(bbox_minx, bbox_miny)")
	require.NoError(t, err)
	assert.False(t, auto)
	assert.Equal(t, "hilbert(bbox_minx, bbox_miny)", o.String())

	o, _, err = layouts.Parse("hilbrt")
	require.NoError(t, err)
	assert.Equal(t, "hilbrt ASC NULLS FIRST", o.String(), "a name that is no curve is a column")
}

func TestOrderColumns(t *testing.T) {
	t.Parallel()
	cases := map[string][]string{
		"hilbert()":                    {},
		"zorder(bbox_minx, bbox_miny)": {"bbox_minx", "bbox_miny"},
		"ts DESC, id":                  {"ts", "id"},
	}
	for expr, want := range cases {
		o, err := cluster.ParseOrder(expr)
		require.NoError(t, err, expr)
		assert.ElementsMatch(t, want, layouts.OrderColumns(o), expr)
	}
}

func TestChangeError(t *testing.T) {
	t.Parallel()
	var err error = &layouts.ChangeError{Table: "db.t", Recorded: "hilbert()", Source: layouts.FromProperty, Requested: "binpack"}
	assert.ErrorIs(t, err, layouts.ErrChange)
	ce, ok := errors.AsType[*layouts.ChangeError](err)
	require.True(t, ok)
	assert.Equal(t, "binpack", ce.Requested)
	assert.Contains(t, err.Error(), "table db.t is laid out by hilbert() (table property geocompact.layout)")
	assert.Contains(t, err.Error(), "lay it out by binpack instead")
}
