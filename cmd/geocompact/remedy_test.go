package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/cmd/internal/cli"
	"github.com/geocompact/geocompact/internal/remedy"
)

// TestEveryRemedyHasWords checks that each remedy a library error of the
// binary can carry has the command line's words: without them a message
// would tell a user to "set option X" where the flag is --option X.
func TestEveryRemedyHasWords(t *testing.T) {
	kinds := remedy.Kinds()
	require.NotEmpty(t, kinds, "the binary links the library's remedies")
	for _, k := range kinds {
		assert.True(t, cli.HasWords(k), "remedy %s has no command-line words in cmd/internal/cli/remedies.go", k)
	}
}
