package delta

import (
	"strings"
	"testing"
	"time"
)

func FuzzParseInterval(f *testing.F) {
	for _, s := range []string{"interval 7 days", "interval 36 hours 30 minutes", "7 days", "interval 1 week",
		"interval 213504 days", "interval -7 days", "interval 106751 days", "interval 106752 days",
		"interval 9223372036854775807 nanoseconds", "interval 9223372036854775808 nanoseconds",
		"interval 1 month", "interval +3 days", "interval 0 seconds", "interval 1 day 1 day"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseInterval(s)
		if err != nil {
			return
		}
		if d < 0 || d > MaxInterval {
			t.Fatalf("ParseInterval(%q) = %v, out of range", s, d)
		}
		if back, err := ParseInterval(formatInterval(d)); err != nil || back != d {
			t.Fatalf("ParseInterval(%q) = %v, written %q, read back as %v, %v", s, d, formatInterval(d), back, err)
		}
	})
}

// TestParseIntervalRange: intervals too long for a duration, or negative,
// are refused saying so, never wrapped around to a short or negative
// retention.
func TestParseIntervalRange(t *testing.T) {
	for in, want := range map[string]string{
		"interval 213504 days":                     "over the maximum of 106751 days",
		"interval 106752 days":                     "over the maximum of 106751 days",
		"interval 9223372036854775808 nanoseconds": "over the maximum of 106751 days",
		"interval 106751 days 1 day":               "over the maximum of 106751 days",
		"interval -7 days":                         "-7 days is negative",
		"interval 7 days -1 hours":                 "-1 hours is negative",
	} {
		_, err := ParseInterval(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseInterval(%q) = %v, want an error containing %q", in, err, want)
		}
	}
	d, err := ParseInterval("interval 106751 days")
	if err != nil || d != 106751*24*time.Hour {
		t.Errorf("ParseInterval(106751 days) = %v, %v", d, err)
	}
}
