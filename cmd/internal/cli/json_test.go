package cli_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/cmd/internal/cli"
)

// TestWriteJSON pins the bytes every --json output is written with: two
// spaces of indent, HTML characters escaped, one trailing newline.
func TestWriteJSON(t *testing.T) {
	t.Parallel()
	v := struct {
		N     int               `json:"n"`
		List  []string          `json:"list"`
		Empty map[string]string `json:"empty"`
		S     string            `json:"s"`
	}{N: 1, List: []string{"a", "b"}, Empty: map[string]string{}, S: "<a & b>"}
	var buf bytes.Buffer
	require.NoError(t, cli.WriteJSON(&buf, v))
	assert.Equal(t, `{
  "n": 1,
  "list": [
    "a",
    "b"
  ],
  "empty": {},
  "s": "\u003ca \u0026 b\u003e"
}
`, buf.String())
}
