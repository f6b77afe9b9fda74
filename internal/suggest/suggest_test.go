package suggest

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestClosest(t *testing.T) {
	curves := []string{"linear", "zorder", "hilbert", "str"}
	for word, want := range map[string]string{"hilbret": "hilbert", "zordr": "zorder", "Linear": "linear", "st": "str"} {
		got, ok := Closest(word, curves)
		assert.True(t, ok, word)
		assert.Equal(t, want, got, word)
	}
	_, ok := Closest("quadtree", curves)
	assert.False(t, ok, "nothing close")
	assert.Equal(t, "; did you mean rewrite-all?", Hint("rewrite-al", []string{"rewrite-all", "min-input-files"}))
	assert.Empty(t, Hint("xyz", []string{"rewrite-all"}))
}

func TestDistance(t *testing.T) {
	assert.Equal(t, 0, distance("abc", "abc"))
	assert.Equal(t, 1, distance("hilbret", "hilbert"), "a swap")
	assert.Equal(t, 2, distance("hilbrt", "hilbert2"))
	assert.Equal(t, 3, distance("", "abc"))
	assert.Equal(t, 1, distance("zordr", "zorder"))
	assert.Equal(t, 1, distance("gsi", "gis"), "a swap is one edit")
	assert.Equal(t, 1, distance("pigns", "pings"))
}

func TestClosestSwapsAndPrefixes(t *testing.T) {
	assert.Equal(t, "; did you mean gis?", Hint("gsi", []string{"demo", "gis"}))
	opts := []string{"target-file-size-bytes", "min-file-size-bytes", "max-file-size-bytes"}
	assert.Equal(t, "; did you mean target-file-size-bytes?", Hint("target-file-size", opts))
	assert.Empty(t, Hint("ta", opts), "too short to complete")
}

func TestExcerpt(t *testing.T) {
	assert.Equal(t, `"x > 1"`, Excerpt("x > 1"))
	long := strings.Repeat("id > 1 AND ", 20000)
	got := Excerpt(long)
	assert.Less(t, len(got), 120)
	assert.True(t, strings.HasPrefix(got, `"id > 1 AND`), got)
	assert.True(t, strings.HasSuffix(got, "… (220000 bytes)"), got)
}
