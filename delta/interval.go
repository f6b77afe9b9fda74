package delta

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// MaxInterval is the longest interval ParseInterval accepts: the longest
// time.Duration, about 106,751 days (292 years).
const MaxInterval time.Duration = math.MaxInt64

// IntervalError reports an interval ParseInterval refuses: malformed,
// negative, or over MaxInterval.
type IntervalError struct {
	Value  string
	Reason string
}

func (e *IntervalError) Error() string {
	return fmt.Sprintf("invalid interval %q: %s", e.Value, e.Reason)
}

var intervalUnits = map[string]time.Duration{
	"nanosecond": time.Nanosecond, "microsecond": time.Microsecond, "millisecond": time.Millisecond,
	"second": time.Second, "minute": time.Minute, "hour": time.Hour, "day": 24 * time.Hour, "week": 7 * 24 * time.Hour,
}

// ParseInterval parses a Spark calendar interval of fixed-length units:
// "interval 1 week", "interval 36 hours 30 minutes", "7 days". Every
// amount must be a whole number, none negative, and the total at most
// MaxInterval: a larger one does not wrap around to a short or negative
// duration, it is an *IntervalError saying so.
func ParseInterval(s string) (time.Duration, error) {
	words := strings.Fields(strings.ToLower(strings.TrimSpace(s)))
	if len(words) > 0 && words[0] == "interval" {
		words = words[1:]
	}
	if len(words) == 0 || len(words)%2 != 0 {
		return 0, &IntervalError{Value: s, Reason: `want e.g. "interval 7 days"`}
	}
	var total time.Duration
	for i := 0; i < len(words); i += 2 {
		unit, ok := intervalUnits[strings.TrimSuffix(words[i+1], "s")]
		if !ok {
			return 0, &IntervalError{Value: s, Reason: fmt.Sprintf("unknown unit %q (months and years have no fixed length)", words[i+1])}
		}
		n, err := strconv.ParseInt(words[i], 10, 64)
		if err != nil && !strings.HasPrefix(words[i], "-") && isDigits(strings.TrimPrefix(words[i], "+")) {
			return 0, overMaxInterval(s)
		}
		if err != nil {
			return 0, &IntervalError{Value: s, Reason: fmt.Sprintf(`%q is not a whole number; want e.g. "interval 7 days"`, words[i])}
		}
		if n < 0 || strings.HasPrefix(words[i], "-") {
			return 0, &IntervalError{Value: s, Reason: fmt.Sprintf("%s %s is negative; a retention must be positive", words[i], words[i+1])}
		}
		if time.Duration(n) > (MaxInterval-total)/unit {
			return 0, overMaxInterval(s)
		}
		total += time.Duration(n) * unit
	}
	return total, nil
}

func overMaxInterval(s string) error {
	return &IntervalError{Value: s, Reason: fmt.Sprintf("over the maximum of %d days (about 292 years)", MaxInterval/(24*time.Hour))}
}

func isDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// formatInterval renders d as ParseInterval reads it, in the largest unit
// that divides it: "interval 7 days", "interval 36 hours".
func formatInterval(d time.Duration) string {
	units := []struct {
		name string
		d    time.Duration
	}{{"days", 24 * time.Hour}, {"hours", time.Hour}, {"minutes", time.Minute}, {"seconds", time.Second},
		{"milliseconds", time.Millisecond}, {"microseconds", time.Microsecond}}
	for _, u := range units {
		if d%u.d == 0 {
			return fmt.Sprintf("interval %d %s", d/u.d, u.name)
		}
	}
	return fmt.Sprintf("interval %d nanoseconds", d)
}
