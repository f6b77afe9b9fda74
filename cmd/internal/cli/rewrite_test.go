package cli_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/cmd/internal/cli"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/table"
)

// TestRequest checks that the flags become the engine's request and that
// each kind of mistake is refused before anything is opened.
func TestRequest(t *testing.T) {
	f := cli.RewriteFlags{Table: "gis.t", Curve: "hilbert", Options: []string{"rewrite-all", "target-file-size-bytes = 64MiB"}, DryRun: true}
	req, err := f.Request()
	require.NoError(t, err)
	assert.Equal(t, "hilbert", req.Curve)
	assert.True(t, req.DryRun)
	assert.Equal(t, map[string]string{"rewrite-all": "", "target-file-size-bytes": "64MiB"}, req.Options)

	for name, bad := range map[string]cli.RewriteFlags{
		"no table":       {},
		"unknown option": {Table: "gis.t", Options: []string{"no-such=1"}},
		"empty key":      {Table: "gis.t", Options: []string{"=1"}},
		"curve":          {Table: "gis.t", Curve: "spiral"},
		"sort order":     {Table: "gis.t", SortOrder: "hilbert("},
		"strategy":       {Table: "gis.t", Strategy: "shuffle"},
	} {
		_, err := bad.Request()
		assert.Error(t, err, name)
	}
}

// TestWriteResult checks the result table: the extra columns come before
// DURATION, bytes are raw numbers unless human, and the last line says
// what was done.
func TestWriteResult(t *testing.T) {
	res := &engine.Result{RewrittenDataFilesCount: 3, AddedDataFilesCount: 1, RewrittenBytesCount: 2048, SnapshotsCommitted: 1,
		Strategy: "sort", SortOrder: "hilbert(bbox_minx)", Verified: true, Duration: 1500 * time.Millisecond, Plan: &engine.Plan{}}
	var out bytes.Buffer
	require.NoError(t, cli.WriteResult(&out, res, false, cli.Column{Name: "RUNNER", Value: "prism"}))
	assert.Contains(t, out.String(), "SNAPSHOTS  RUNNER  DURATION")
	assert.Contains(t, out.String(), "2048")
	assert.Contains(t, out.String(), "prism   1.5s")
	assert.Contains(t, out.String(), "strategy sort by hilbert(bbox_minx); verified")

	out.Reset()
	res.Verified, res.DryRun = false, true
	require.NoError(t, cli.WriteResult(&out, res, true))
	assert.Contains(t, out.String(), "2.0 KiB")
	assert.Contains(t, out.String(), "GROUP  PARTITION")
	assert.Contains(t, out.String(), "dry run: 0 groups")
}

// TestWriteResultDelta: a Delta table's commits are counted as versions.
func TestWriteResultDelta(t *testing.T) {
	res := &engine.Result{Format: table.FormatDelta, SnapshotsCommitted: 1, Strategy: "binpack", Verified: true, Plan: &engine.Plan{}}
	var out bytes.Buffer
	require.NoError(t, cli.WriteResult(&out, res, false))
	assert.Contains(t, out.String(), "BYTES AFTER  VERSIONS  DURATION")
	assert.NotContains(t, out.String(), "SNAPSHOTS")
}

// TestCurveFlagListsTheRegistry checks that --curve's help lists every
// name of cluster's registry, with the descriptions it gives.
func TestCurveFlagListsTheRegistry(t *testing.T) {
	fs := pflag.NewFlagSet("rewrite", pflag.ContinueOnError)
	new(cli.RewriteFlags).Register(fs)
	assert.Equal(t, "cluster rows by a curve over their bbox: linear, zorder, hilbert, str (sort-tile-recursive), "+
		"kd (a k-d tree of files split by cost) or auto (chosen per group by estimate)", fs.Lookup("curve").Usage)
	for _, bad := range []string{"hilbert", "linear"} {
		_, err := (&cli.RewriteFlags{Table: "gis.t", Curve: bad, Windows: "w.json"}).Request()
		assert.ErrorContains(t, err, "--windows is the query mix", bad)
	}
}
