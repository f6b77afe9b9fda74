package icebergtable

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	format "github.com/geocompact/geocompact/table"
)

// TestParseSources checks the history both formats record: the JSON
// entries, and the older line format, read only when its lines match the
// recorded file count, so that a name holding a newline is not read as an
// entry of its own.
func TestParseSources(t *testing.T) {
	a, b := strings.Repeat("a", 64), strings.Repeat("b", 64)
	written := sourcesSummary([]format.Source{{Path: "/in/x\n" + b + " b.parquet", Digest: a}})
	got, err := parseSources(map[string]string{SourcesKey: written, FilesKey: "1"})
	require.NoError(t, err)
	assert.Equal(t, []sourceEntry{{Digest: a, Name: "x\n" + b + " b.parquet"}}, got)

	got, err = parseSources(map[string]string{SourcesKey: a + " a.parquet\n" + b + " b.parquet", FilesKey: "2"})
	require.NoError(t, err)
	assert.Equal(t, []sourceEntry{{Digest: a, Name: "a.parquet"}, {Digest: b, Name: "b.parquet"}}, got)

	for name, props := range map[string]map[string]string{
		"forged line":      {SourcesKey: a + " x\n" + b + " b.parquet", FilesKey: "1"},
		"no file count":    {SourcesKey: a + " a.parquet"},
		"not a digest":     {SourcesKey: "zz a.parquet", FilesKey: "1"},
		"broken JSON":      {SourcesKey: `[{"sha256":"` + a},
		"bad JSON digest":  {SourcesKey: `[{"sha256":"AB","name":"a"}]`},
		"upper-case digit": {SourcesKey: strings.ToUpper(a) + " a.parquet", FilesKey: "1"},
	} {
		got, err := parseSources(props)
		assert.ErrorIs(t, err, errSources, name)
		assert.Empty(t, got, name)
	}
	got, err = parseSources(map[string]string{"other": "x"})
	assert.NoError(t, err)
	assert.Empty(t, got)
}
