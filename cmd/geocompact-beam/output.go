package main

import (
	"encoding/json"
	"io"
	"strconv"

	"github.com/geocompact/geocompact/cmd/internal/cli"
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

// MarshalJSON encodes the engine's result (engine.Result.MarshalJSON),
// then the runner and the shuffled bytes. Without it the embedded
// result's MarshalJSON would be promoted and leave them out.
func (r Result) MarshalJSON() ([]byte, error) {
	extra, err := json.Marshal(struct {
		Runner       string `json:"runner"`
		ShuffleBytes int64  `json:"shuffle_bytes"`
	}{r.Runner, r.ShuffleBytes})
	if err != nil || r.Result == nil {
		return extra, err
	}
	b, err := json.Marshal(r.Result)
	if err != nil {
		return nil, err
	}
	return append(append(b[:len(b)-1:len(b)-1], ','), extra[1:]...), nil
}
