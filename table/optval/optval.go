// Package optval parses the values of named options (a rewrite's options
// and table properties): integers, booleans, fractions and byte sizes with
// units, with errors that name the option and say what is wanted. It
// knows nothing of what the options mean; the engine's Request.OptionsFor
// does.
package optval

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/geocompact/geocompact/internal/remedy"
)

// ErrBad marks a malformed option value.
var ErrBad = errors.New("engine: bad option")

// MissingError is an option given without the value it needs. It wraps
// ErrBad.
type MissingError struct{ Option string }

var (
	_ remedy.Carrier = (*MissingError)(nil)
	_ remedy.Carrier = (*PropertyError)(nil)
)

func (e *MissingError) Error() string { return e.Say(remedy.Library) }

// Remedy is to give the option a value (RemedyValue).
func (e *MissingError) Remedy() remedy.Advice {
	return remedy.Advice{Kind: RemedyValue, Name: e.Option}
}

// Say returns the message with the remedy worded by w; the library's
// words add nothing to it.
func (e *MissingError) Say(w remedy.Wording) string {
	return (&remedy.Error{Err: ErrBad, Facts: fmt.Sprintf("option %s needs a value", e.Option), Advice: e.Remedy()}).Say(w)
}

// Unwrap returns ErrBad.
func (e *MissingError) Unwrap() error { return ErrBad }

// PropertyError is a table property whose value cannot be used. It wraps
// ErrBad.
type PropertyError struct {
	Property, Value string
	// Want says what the value should be; Example is a value that is.
	Want, Example string
}

func (e *PropertyError) Error() string { return e.Say(remedy.Library) }

// Remedy is to set the property to a value such as Example
// (RemedyProperty).
func (e *PropertyError) Remedy() remedy.Advice {
	return remedy.Advice{Kind: RemedyProperty, Name: e.Property, Value: e.Example}
}

// Say returns the message with the remedy worded by w.
func (e *PropertyError) Say(w remedy.Wording) string { return e.Facts() + "; " + w(e.Remedy()) }

// What a user can do about a MissingError and a PropertyError, in the
// library's words.
var (
	// RemedyValue: give the option Name a value. The library says nothing
	// more than the error does.
	RemedyValue = remedy.Define("optval.value", func(remedy.Advice) string { return "" })
	// RemedyProperty: set the property Name to a value such as Value.
	RemedyProperty = remedy.Define("optval.property", func(a remedy.Advice) string {
		return "set it to a value such as " + a.Value
	})
)

// Facts says which property is wrong and what it should be, without
// advice.
func (e *PropertyError) Facts() string {
	return fmt.Sprintf("%v: table property %s=%q is not %s", ErrBad, e.Property, e.Value, e.Want)
}

// Unwrap returns ErrBad.
func (e *PropertyError) Unwrap() error { return ErrBad }

// Parser parses the values of named options, keeping the first error;
// once Err is set the other methods do nothing.
type Parser struct {
	// KV holds the options by name.
	KV map[string]string
	// Err is the first error, which wraps ErrBad and names the option.
	Err error
}

// Int64 parses an integer option of at least minVal.
func (p *Parser) Int64(name string, dst *int64, minVal int64) {
	v, ok := p.Value(name)
	if !ok {
		return
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < minVal {
		p.Err = fmt.Errorf("%w: %s=%q: want an integer >= %d", ErrBad, name, v, minVal)
		return
	}
	*dst = n
}

// Int parses an integer option of at least minVal.
func (p *Parser) Int(name string, dst *int, minVal int) {
	n := int64(*dst)
	p.Int64(name, &n, int64(minVal))
	*dst = int(n)
}

// Bool parses a boolean option; a bare key (an empty value) means true.
func (p *Parser) Bool(name string, dst *bool) {
	v, ok := p.KV[name]
	if !ok || p.Err != nil {
		return
	}
	if strings.TrimSpace(v) == "" {
		*dst = true
		return
	}
	b, err := strconv.ParseBool(strings.TrimSpace(v))
	if err != nil {
		p.Err = fmt.Errorf("%w: %s=%q: want true or false", ErrBad, name, v)
		return
	}
	*dst = b
}

// Value returns the value of a non-boolean option when it is set and no
// error is pending; an empty value is an error naming the option.
func (p *Parser) Value(name string) (string, bool) {
	v, ok := p.KV[name]
	if !ok || p.Err != nil {
		return "", false
	}
	if strings.TrimSpace(v) == "" {
		p.Err = &MissingError{Option: name}
		return "", false
	}
	return v, true
}

// Fraction parses a fraction option in (0, 1], or [0, 1] with zero.
func (p *Parser) Fraction(name string, dst *float64, zero bool) {
	v, ok := p.Value(name)
	if !ok {
		return
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || !(f <= 1 && (f > 0 || zero && f == 0)) {
		p.Err = fmt.Errorf("%w: %s=%q: want a fraction in (0, 1]", ErrBad, name, v)
		return
	}
	*dst = f
}

// Size parses a size option of at least minVal bytes (see ParseSize).
func (p *Parser) Size(name string, dst *int64, minVal int64) {
	p.SizeAtMost(name, dst, minVal, math.MaxInt64)
}

// SizeAtMost parses a size option of minVal to maxVal bytes; a larger
// value is refused with the maximum.
func (p *Parser) SizeAtMost(name string, dst *int64, minVal, maxVal int64) {
	v, ok := p.Value(name)
	if !ok {
		return
	}
	n, err := ParseSize(v)
	switch {
	case err != nil:
	case n < minVal:
		err = fmt.Errorf("want at least %d bytes", minVal)
	case n > maxVal:
		err = fmt.Errorf("want at most %s", FormatLimit(maxVal))
	}
	if err != nil {
		p.Err = fmt.Errorf("%w: %s=%q: %w", ErrBad, name, v, err)
		return
	}
	*dst = n
}

// FormatBytes renders n in binary units ("1.2 GiB") for messages and
// human-readable output.
func FormatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// FormatLimit writes a size limit for a message: in the largest unit
// that divides it exactly, with the byte count, e.g. "1024TiB
// (1125899906842624 bytes)".
func FormatLimit(n int64) string {
	for _, u := range []struct {
		name string
		mult int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.mult && n%u.mult == 0 {
			return fmt.Sprintf("%d%s (%d bytes)", n/u.mult, u.name, n)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}

// sizeUnits are the units ParseSize accepts, by lower-case name.
var sizeUnits = map[string]int64{
	"": 1, "b": 1,
	"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
	"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
}

// ParseSize parses a byte count with an optional unit: a bare number is
// bytes, KB, MB, GB and TB are 1000-based (SI), KiB, MiB, GiB and TiB are
// 1024-based (IEC); units are case-insensitive and may follow a space or a
// decimal number ("1.5GiB"). Single-letter units ("512k") are refused as
// ambiguous.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i < 0 {
		i = len(t)
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	mult, ok := sizeUnits[unit]
	malformed := fmt.Errorf("size %q: want bytes with an optional unit, KB, MB, GB, TB (1000-based) or KiB, MiB, GiB, TiB (1024-based), e.g. 128MiB", s)
	tooLarge := fmt.Errorf("size %q exceeds the largest size, %d bytes (8 EiB)", s, int64(math.MaxInt64))
	if !ok || num == "" {
		return 0, malformed
	}
	if !strings.Contains(num, ".") { // whole numbers exactly, up to the last byte
		n, err := strconv.ParseInt(num, 10, 64)
		switch {
		case errors.Is(err, strconv.ErrRange) || err == nil && n > math.MaxInt64/mult:
			return 0, tooLarge
		case err != nil:
			return 0, malformed
		}
		return n * mult, nil
	}
	f, err := strconv.ParseFloat(num, 64)
	switch {
	case err != nil || f < 0:
		return 0, malformed
	case f*float64(mult) >= 1<<63:
		return 0, tooLarge
	}
	return int64(f * float64(mult)), nil
}
