package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPlanPurgeDeletes: a purge makes exactly the files that carry deletes
// candidates, whatever their size, and keeps their groups however few
// files they hold; every other file is skipped, even a small one.
func TestPlanPurgeDeletes(t *testing.T) {
	o := mustOptions(t, map[string]string{OptTargetFileSize: "1000"})
	o.PurgeDeletes = true
	o.clustered, o.OverlapSelection = true, true // a curve's overlap selection adds no file
	fs := append(files("p=a", 900, 100, 1500), files("p=b", 50, 5000)...)
	fs[0].DeleteFiles, fs[4].DeleteFiles = 1, 2
	p := o.Plan(fs)
	require.Len(t, p.Groups, 2, "one group per partition with deletes: %+v", p.Groups)
	var rewritten []string
	for _, g := range p.Groups {
		assert.Equal(t, "purge: its files carry deletes", g.Reason)
		for _, f := range g.Files {
			rewritten = append(rewritten, f.Path)
		}
	}
	assert.ElementsMatch(t, []string{fs[0].Path, fs[4].Path}, rewritten)
	require.Len(t, p.Skipped, 3)
	for _, s := range p.Skipped {
		assert.Equal(t, "carries no deletes (a purge rewrites only files that do)", s.Reason, s.Path)
	}
}

// TestPlanPurgeNothing: a table without deletes plans no group.
func TestPlanPurgeNothing(t *testing.T) {
	o := mustOptions(t, nil)
	o.PurgeDeletes = true
	p := o.Plan(files("", 10, 20, 30, 40, 50, 60))
	assert.Empty(t, p.Groups)
	assert.Len(t, p.Skipped, 6)
	assert.Equal(t, "none of the 6 files carries deletes: there is nothing to purge", p.Hint)
}

// TestPurgeDeletesExcludesRewriteAll: the two contradict each other and
// are refused by name.
func TestPurgeDeletesExcludesRewriteAll(t *testing.T) {
	_, err := Request{PurgeDeletes: true, Options: map[string]string{OptRewriteAll: "true"}}.OptionsFor(nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "rewrite-all rewrites every file, a purge only the files that carry deletes")
	o, err := Request{PurgeDeletes: true}.OptionsFor(nil)
	require.NoError(t, err)
	assert.True(t, o.PurgeDeletes)
}
