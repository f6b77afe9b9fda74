package main

import (
	"io"
	"strconv"

	"github.com/geocompact/geocompact/internal/cli"
)

// writeResult writes the result as geocompact rewrite does, plus the
// runner and the shuffled bytes.
func writeResult(out io.Writer, res *Result, asJSON bool) error {
	if asJSON {
		return cli.WriteJSON(out, res)
	}
	return cli.WriteResult(out, res.Result, false,
		cli.Column{Name: "RUNNER", Value: res.Runner}, cli.Column{Name: "SHUFFLE BYTES", Value: strconv.FormatInt(res.ShuffleBytes, 10)})
}
