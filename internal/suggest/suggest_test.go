package suggest

import (
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
	assert.Equal(t, 2, distance("hilbret", "hilbert"))
	assert.Equal(t, 3, distance("", "abc"))
	assert.Equal(t, 1, distance("zordr", "zorder"))
}
