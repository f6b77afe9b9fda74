package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGenerateTracks generates a fleet's pings as points and as lines, and
// refuses an extent with no populated place in it by name, before writing
// anything.
func TestGenerateTracks(t *testing.T) {
	t.Parallel()
	wh := t.TempDir()
	for _, geom := range []string{"points", "lines"} {
		r := runCLI(t, wh, false, "generate", "--table", "g."+geom, "--rows", "4000", "--commits", "8",
			"--distribution", "tracks", "--geometry", geom, "--json")
		require.Equal(t, exitOK, r.Code, r.Stderr)
		var res struct {
			Rows, Commits int
			Extent        struct{ MinX, MinY, MaxX, MaxY float64 }
		}
		require.NoError(t, json.Unmarshal([]byte(r.Stdout), &res), r.Stdout)
		assert.Equal(t, 4000, res.Rows)
		assert.Equal(t, 8, res.Commits)
		assert.GreaterOrEqual(t, res.Extent.MinX, -180.0)
		assert.LessOrEqual(t, res.Extent.MaxY, 90.0)
		assert.Less(t, res.Extent.MinX, res.Extent.MaxX)
	}

	before := treeState(t, wh)
	r := runCLI(t, wh, false, "generate", "--table", "g.sea", "--rows", "100", "--commits", "1",
		"--distribution", "tracks", "--extent", "1000,1000,2000,2000")
	assert.Equal(t, exitUsage, r.Code)
	assert.Contains(t, r.Stderr, "tracks: no populated place")
	assert.Equal(t, before, treeState(t, wh), "a refused generate wrote or removed files")

	r = runCLI(t, wh, false, "generate", "--table", "g.x", "--rows", "100", "--commits", "1", "--distribution", "track")
	assert.Equal(t, exitUsage, r.Code)
	assert.Contains(t, r.Stderr, "places or tracks")
}
