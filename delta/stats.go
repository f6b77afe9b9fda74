package delta

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Stats is a file's statistics as the add action's stats JSON holds them.
// Column keys are physical names; nested columns are nested maps. Numbers are
// kept as json.Number so that longs and decimals lose no precision.
type Stats struct {
	NumRecords  int64          `json:"numRecords"`
	MinValues   map[string]any `json:"minValues,omitempty"`
	MaxValues   map[string]any `json:"maxValues,omitempty"`
	NullCount   map[string]any `json:"nullCount,omitempty"`
	TightBounds *bool          `json:"tightBounds,omitempty"`
}

// parseStats parses a stats JSON string; "" gives nil, nil.
func parseStats(s string) (*Stats, error) {
	if s == "" {
		return nil, nil
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var st Stats
	if err := dec.Decode(&st); err != nil {
		return nil, fmt.Errorf("parse stats: %w", err)
	}
	return &st, nil
}

// JSON renders the stats as an add action's stats string.
func (s *Stats) JSON() (string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return "", fmt.Errorf("encode stats: %w", err)
	}
	return strings.TrimSuffix(buf.String(), "\n"), nil
}

// Tight reports whether min and max are exact (true when not recorded, as the
// protocol says).
func (s *Stats) Tight() bool { return s.TightBounds == nil || *s.TightBounds }

// Min returns the minimum recorded for the column at the physical path.
func (s *Stats) Min(path ...string) (any, bool) { return lookup(s.MinValues, path) }

// Max returns the maximum recorded for the column at the physical path.
func (s *Stats) Max(path ...string) (any, bool) { return lookup(s.MaxValues, path) }

// Nulls returns the null count recorded for the column at the physical path.
func (s *Stats) Nulls(path ...string) (int64, bool) {
	v, ok := lookup(s.NullCount, path)
	if !ok {
		return 0, false
	}
	n, err := toInt64(v)
	return n, err == nil
}

// Float returns a numeric statistic as a float64, for bbox columns.
func Float(v any) (float64, bool) {
	switch v := v.(type) {
	case json.Number:
		f, err := v.Float64()
		return f, err == nil
	case float64:
		return v, true
	case int64:
		return float64(v), true
	}
	return 0, false
}

func lookup(m map[string]any, path []string) (any, bool) {
	var cur any = m
	for _, p := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = mm[p]; !ok {
			return nil, false
		}
	}
	if _, isMap := cur.(map[string]any); isMap || cur == nil {
		return nil, false
	}
	return cur, true
}

func toInt64(v any) (int64, error) {
	switch v := v.(type) {
	case json.Number:
		return v.Int64()
	case int64:
		return v, nil
	case float64:
		return int64(v), nil
	case string:
		return strconv.ParseInt(v, 10, 64)
	}
	return 0, fmt.Errorf("not a number: %v", v)
}
