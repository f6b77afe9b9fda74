package table

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/geocompact/geocompact/internal/suggest"
)

// PartitionTerm is one term of a partitioning as a user writes it:
// "days(ts)" is Transform "day" of Column "ts", "bucket(16, id)" is
// Transform "bucket" with Width 16, and a bare column is its "identity".
type PartitionTerm struct {
	// Text is the term as written.
	Text string
	// Transform is Iceberg's name of the transform: identity, year,
	// month, day, hour, bucket, truncate or void.
	Transform string
	// Width is bucket's N or truncate's W, 0 for the others.
	Width  int
	Column string
}

// IcebergTransform is the term's transform as Iceberg writes it:
// "day", "bucket[16]".
func (t PartitionTerm) IcebergTransform() string {
	if t.Width > 0 {
		return fmt.Sprintf("%s[%d]", t.Transform, t.Width)
	}
	return t.Transform
}

// PartitionTransforms are the transforms a partitioning may use, as
// written: Iceberg's names and Spark's plural forms (days = day, ...).
var PartitionTransforms = []string{
	"identity", "year", "years", "month", "months", "day", "days", "date",
	"hour", "hours", "date_hour", "bucket(N, col)", "truncate(W, col)", "void",
}

// sparkTransforms maps Spark's partition transform names to Iceberg's.
var sparkTransforms = map[string]string{
	"years": "year", "months": "month", "days": "day", "date": "day", "hours": "hour", "date_hour": "hour",
}

// ParsePartitioning parses "transform(col), ..." without a schema, so an
// unknown transform or a malformed term fails before any data is read:
// identity columns may be given bare, and Spark's spellings are accepted
// (days(ts), hours(ts), years, months, bucket(N, col), truncate(W, col));
// see PartitionTransforms. An empty string is no partitioning (nil).
// Errors match ErrPartitionSpec.
func ParsePartitioning(expr string) ([]PartitionTerm, error) {
	if strings.TrimSpace(expr) == "" {
		return nil, nil
	}
	var terms []PartitionTerm
	for _, text := range splitTopLevel(expr) {
		text = strings.TrimSpace(text)
		t := PartitionTerm{Text: text, Transform: "identity", Column: text}
		if open := strings.IndexByte(text, '('); open >= 0 {
			if !strings.HasSuffix(text, ")") {
				return nil, fmt.Errorf("%w: partition %q: want transform(column)", ErrPartitionSpec, text)
			}
			fn := strings.ToLower(strings.TrimSpace(text[:open]))
			if alias, ok := sparkTransforms[fn]; ok {
				fn = alias
			}
			args := strings.Split(text[open+1:len(text)-1], ",")
			for i := range args {
				args[i] = strings.TrimSpace(args[i])
			}
			col, width, err := transformArgs(fn, args)
			if err != nil {
				return nil, fmt.Errorf("%w: partition %q: %w", ErrPartitionSpec, text, err)
			}
			t.Transform, t.Width, t.Column = fn, width, col
		}
		if t.Column == "" {
			return nil, fmt.Errorf("%w: partition %q: unknown transform (want %s)", ErrPartitionSpec, t.Text, strings.Join(PartitionTransforms, ", "))
		}
		terms = append(terms, t)
	}
	return terms, nil
}

// transformArgs checks the arguments of transform fn and returns the
// column and the width of bucket and truncate, which take it first, as
// Spark writes them, or last.
func transformArgs(fn string, args []string) (col string, width int, err error) {
	switch fn {
	case "bucket", "truncate":
		if len(args) != 2 {
			return "", 0, fmt.Errorf("want %s(N, column)", fn)
		}
		n, col := args[0], args[1]
		if _, err := strconv.Atoi(n); err != nil {
			n, col = col, n
		}
		w, err := strconv.Atoi(n)
		if err != nil || w <= 0 {
			return "", 0, fmt.Errorf("want %s(N, column) with a positive whole N", fn)
		}
		return col, w, nil
	case "identity", "year", "month", "day", "hour", "void":
		if len(args) != 1 {
			return "", 0, fmt.Errorf("want %s(column)", fn)
		}
		return args[0], 0, nil
	}
	return "", 0, fmt.Errorf("unknown transform %q (want %s)%s", fn, strings.Join(PartitionTransforms, ", "),
		suggest.Hint(fn, []string{"identity", "year", "years", "month", "months", "day", "days", "hour", "hours", "bucket", "truncate", "void"}))
}

// splitTopLevel splits s at commas outside parentheses.
func splitTopLevel(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}
