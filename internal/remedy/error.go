package remedy

import "strings"

// Error is an error made of what went wrong and what to do about it: the
// message of Err (a category it wraps, nil for none), then Facts, each
// followed by ": ", and then the advice after Sep. A sentinel whose whole
// message is advice ("give a curve or a sort order, not both") has
// neither Err nor Facts.
type Error struct {
	Err error
	// Facts says what went wrong, without advice; "" when the advice says
	// it all.
	Facts string
	// Sep comes between the facts and the advice; "" means ": ".
	Sep    string
	Advice Advice
}

var _ Carrier = (*Error)(nil)

// Error returns the message in the library's words.
func (e *Error) Error() string { return e.Say(Library) }

// Remedy returns the advice.
func (e *Error) Remedy() Advice { return e.Advice }

// Say returns the message with the advice worded by w, and anything Err
// carries worded by w too. Advice worded as "" leaves the facts alone.
func (e *Error) Say(w Wording) string {
	var head []string
	if e.Err != nil {
		head = append(head, Message(e.Err, w))
	}
	if e.Facts != "" {
		head = append(head, e.Facts)
	}
	words := w(e.Advice)
	switch {
	case len(head) == 0:
		return words
	case words == "":
		return strings.Join(head, ": ")
	}
	sep := e.Sep
	if sep == "" {
		sep = ": "
	}
	return strings.Join(head, ": ") + sep + words
}

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }
