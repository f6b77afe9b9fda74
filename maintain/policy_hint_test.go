package maintain_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/maintain"
)

// TestParsePolicyDidYouMean checks that a misspelled policy field names
// the field its section has.
func TestParsePolicyDidYouMean(t *testing.T) {
	t.Parallel()
	for doc, want := range map[string]string{
		"gate:\n  min-avg-file-byte: 10\n":   `unknown field "min-avg-file-byte" in gate; did you mean min-avg-file-bytes?`,
		"expire:\n  retain-lst: 3\n":         `unknown field "retain-lst" in expire; did you mean retain-last?`,
		"rewrite:\n  curv: hilbert\n":        `unknown field "curv" in rewrite; did you mean curve?`,
		"orphan:\n  enabled: true\n":         `unknown field "orphan" in the top level; did you mean orphans?`,
		"gate:\n  completely-different: 1\n": `unknown field "completely-different" in gate`,
	} {
		_, err := maintain.ParsePolicy([]byte(doc), "p.yaml")
		require.ErrorIs(t, err, maintain.ErrPolicy, doc)
		assert.ErrorContains(t, err, want, doc)
	}
	_, err := maintain.ParsePolicy([]byte("gate:\n  completely-different: 1\n"), "p.yaml")
	assert.NotContains(t, err.Error(), "did you mean")
}
