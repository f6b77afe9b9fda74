package maintain_test

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/geocompact/geocompact/maintain"
)

func TestParseDuration(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want time.Duration
		err  bool
	}{
		{in: "5d", want: 5 * 24 * time.Hour},
		{in: "1.5d", want: 36 * time.Hour},
		{in: "36h", want: 36 * time.Hour},
		{in: "90m", want: 90 * time.Minute},
		{in: "0s", want: 0},
		{in: "", err: true},
		{in: "5", err: true},
		{in: "five days", err: true},
		{in: "-1h", err: true},
		{in: "-2d", err: true},
		{in: "d", err: true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := maintain.ParseDuration(tc.in)
			if tc.err {
				if !errors.Is(err, maintain.ErrDuration) {
					t.Fatalf("ParseDuration(%q) = %v, %v; want ErrDuration", tc.in, got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ParseDuration(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestParseAge(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
		err  bool
	}{
		{in: "2d", want: 48 * time.Hour},
		{in: "2026-03-09T12:00:00Z", want: 24 * time.Hour},
		{in: "2026-03-09T12:00:00+02:00", want: 26 * time.Hour}, // 10:00 UTC
		{in: "2026-03-09T12:00:00", want: 24 * time.Hour},       // UTC without an offset
		{in: "2026-03-09", want: 36 * time.Hour},
		{in: "2026-03-11T00:00:00Z", err: true}, // future
		{in: "2026-13-01", err: true},
		{in: "yesterday", err: true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := maintain.ParseAge(tc.in, now)
			if tc.err {
				if !errors.Is(err, maintain.ErrDuration) {
					t.Fatalf("ParseAge(%q) = %v, %v; want ErrDuration", tc.in, got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ParseAge(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestPolicyExampleLoads(t *testing.T) {
	t.Parallel()
	p, err := maintain.LoadPolicy("../docs/policy.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// The example sets every field away from nothing; spot-check that
	// nested values arrive.
	if p.Rewrite.Curve == "" || p.Rewrite.Options["target-file-size-bytes"] == "" || p.Gate.MinAvgFileBytes <= 0 {
		t.Fatalf("example policy lost fields: %+v", p)
	}
	// Round trip through YAML.
	b, err := p.YAML()
	if err != nil {
		t.Fatal(err)
	}
	p2, err := maintain.ParsePolicy(b, "roundtrip")
	if err != nil {
		t.Fatalf("rendered policy does not parse: %v\n%s", err, b)
	}
	b2, _ := p2.YAML()
	if string(b) != string(b2) {
		t.Fatalf("policy YAML does not round-trip:\n%s\n---\n%s", b, b2)
	}
}

func TestPolicyDefaults(t *testing.T) {
	t.Parallel()
	p, err := maintain.ParsePolicy([]byte(""), "empty")
	if err != nil {
		t.Fatal(err)
	}
	d := maintain.DefaultPolicy()
	if time.Duration(p.Expire.OlderThan) != maintain.DefaultExpireOlderThan || p.Expire.RetainLast != 1 ||
		time.Duration(p.Orphans.OlderThan) != maintain.DefaultOrphansOlderThan || !*p.Expire.Enabled || p.Gate != d.Gate {
		t.Fatalf("empty policy = %+v, want the defaults", p)
	}
	// every: 0 means every run, and is kept as zero.
	p, err = maintain.ParsePolicy([]byte("expire:\n  every: 0s\n"), "zero")
	if err != nil || *p.Expire.Every != 0 {
		t.Fatalf("every: 0s gave %v, %v", p.Expire.Every, err)
	}
}

func TestPolicyErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, doc, want string
	}{
		{"unknown top-level field", "gates:\n  min-avg-file-bytes: 1\n", "gates"},
		{"unknown nested field", "expire:\n  older_than: 5d\n", "older_than"},
		{"malformed duration", "expire:\n  older-than: five days\n", "five days"},
		{"expire below floor", "expire:\n  older-than: 30m\n", "expire.older-than"},
		{"orphans below floor", "orphans:\n  older-than: 59m\n", "orphans.older-than"},
		{"bad strategy", "rewrite:\n  strategy: shuffle\n", "shuffle"},
		{"bad option", "rewrite:\n  options:\n    target-file-size: \"1\"\n", "target-file-size"},
		{"retain-last", "expire:\n  retain-last: -1\n", "retain-last"},
		{"short lease", "lease:\n  ttl: 10s\n", "lease.ttl"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := maintain.ParsePolicy([]byte(tc.doc), "p.yaml")
			if !errors.Is(err, maintain.ErrPolicy) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want ErrPolicy naming %q", err, tc.want)
			}
		})
	}
}

func TestLoadPolicyMissingFile(t *testing.T) {
	t.Parallel()
	_, err := maintain.LoadPolicy(t.TempDir() + "/nope.yaml")
	if !errors.Is(err, maintain.ErrPolicy) || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("err = %v, want ErrPolicy wrapping not-exist", err)
	}
}

func TestFormatDurationRoundTrips(t *testing.T) {
	t.Parallel()
	for _, d := range []time.Duration{time.Hour, 36 * time.Hour, 5 * 24 * time.Hour, 90 * time.Minute, 90*time.Minute + 15*time.Second, 0} {
		s := maintain.FormatDuration(d)
		got, err := maintain.ParseDuration(s)
		if err != nil || got != d {
			t.Errorf("FormatDuration(%v) = %q, parses back to %v, %v", d, s, got, err)
		}
	}
	if s := maintain.FormatDuration(36 * time.Hour); s != "36h" {
		t.Errorf("FormatDuration(36h) = %q", s)
	}
}

// TestParseDurationRange: durations too long or negative are refused
// saying which, not just "bad duration".
func TestParseDurationRange(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"9999999999h":            `"9999999999h" is over the maximum of 36500d`,
		"9223372036854775807s":   "is over the maximum of 36500d",
		"36501d":                 "is over the maximum of 36500d",
		"100000000000000000000d": "is over the maximum of 36500d",
		"876001h":                "is over the maximum of 36500d",
		"-1h":                    `"-1h" is negative`,
		"-99999999999999h":       "is negative",
		"-2d":                    "is negative",
		"5 days":                 "is not a duration",
		"infd":                   "is not a duration",
		"NaNd":                   "is not a duration",
	} {
		_, err := maintain.ParseDuration(in)
		if err == nil || !errors.Is(err, maintain.ErrDuration) || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseDuration(%q) = %v, want ErrDuration saying %q", in, err, want)
		}
	}
	if d, err := maintain.ParseDuration("36500d"); err != nil || d != maintain.MaxDuration {
		t.Errorf("ParseDuration(36500d) = %v, %v; want the maximum", d, err)
	}
	now := time.Now()
	if _, err := maintain.ParseAge("9999999999h", now); err == nil || !strings.Contains(err.Error(), "over the maximum") {
		t.Errorf("ParseAge(9999999999h) = %v, want the range error", err)
	}
}

func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"5d", "1.5d", "36h", "90m", "1h30m15s", "0s", "-1h", "9999999999h", "36500d",
		"36501d", "1e400d", ".5d", "2562047h", "9223372036854775807ns", "+3h", "-0s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := maintain.ParseDuration(s)
		if err != nil {
			if !errors.Is(err, maintain.ErrDuration) {
				t.Fatalf("ParseDuration(%q): %v is not ErrDuration", s, err)
			}
			return
		}
		if d < 0 || d > maintain.MaxDuration {
			t.Fatalf("ParseDuration(%q) = %v, out of range", s, d)
		}
		if back, err := maintain.ParseDuration(maintain.FormatDuration(d)); err != nil || back != d {
			t.Fatalf("ParseDuration(%q) = %v, written %q, read back as %v, %v", s, d, maintain.FormatDuration(d), back, err)
		}
	})
}
