// Package remedy says what a user can do about an error as a value, apart
// from the words for it. A library error carries an Advice: a Kind, which
// names the action and holds the library's words for it, and the values
// those words need (a table, an option, an example value). Go callers read
// the library's words in the error's message; a front end finds the Advice
// (errors.As on Carrier) and words it in its own terms, a flag or a
// command, with Message. The front end never matches the library's text,
// so rewording a library message cannot break the front end's.
package remedy

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Kind names an action a user can take about an error. Each is made once,
// by Define, as a package variable of the package whose errors carry it;
// its identity, not its name, is what a front end keys its words by.
type Kind struct {
	name string
	lib  func(Advice) string
}

var (
	mu    sync.Mutex
	kinds = map[string]*Kind{}
)

// Define returns the Kind called name ("engine.one-order") whose library
// words are lib's. Names are unique across the program, so Kinds can list
// every Kind a front end must word; a second Define of a name panics.
func Define(name string, lib func(Advice) string) *Kind {
	mu.Lock()
	defer mu.Unlock()
	if _, ok := kinds[name]; ok {
		panic(fmt.Sprintf("remedy: kind %q defined twice", name))
	}
	k := &Kind{name: name, lib: lib}
	kinds[name] = k
	return k
}

// Kinds returns every Kind defined in the program, by name: the packages
// a program links define them, so a front end's test can check it words
// each one.
func Kinds() []*Kind {
	mu.Lock()
	defer mu.Unlock()
	ks := make([]*Kind, 0, len(kinds))
	for _, k := range kinds {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, func(a, b *Kind) int { return strings.Compare(a.name, b.name) })
	return ks
}

// String returns the Kind's name.
func (k *Kind) String() string { return k.name }

// Advice is what a user can do about an error: its Kind, and the values
// the words for it need. Which fields a Kind uses is documented where it
// is defined.
type Advice struct {
	Kind *Kind
	// Table is the table to act on.
	Table string
	// Name is the option, property or setting to change.
	Name string
	// Value is a value to give it, or another value the words quote.
	Value string
}

// Wording says an Advice in some front end's terms.
type Wording func(Advice) string

// Library says an Advice in the library's own terms: the words of its
// Kind, "" for no Kind.
func Library(a Advice) string {
	if a.Kind == nil {
		return ""
	}
	return a.Kind.lib(a)
}

// Carrier is an error that carries its remedy. Say is its message with
// the advice worded by w; its Error is Say(Library). A Remedy with no Kind
// means it has none to give this time.
type Carrier interface {
	error
	Remedy() Advice
	Say(w Wording) string
}

// Message is err's message with the advice of each Carrier in its chain
// worded by w. A wrapper's message holds the message of each error it
// wraps (fmt.Errorf's %w does), so each of those is replaced, as a whole,
// by its own rendering; a message is never searched for a phrase. A
// Carrier renders what it wraps itself.
func Message(err error, w Wording) string {
	if c, ok := err.(Carrier); ok && c.Remedy().Kind != nil {
		return c.Say(w)
	}
	msg := err.Error()
	for _, inner := range unwrap(err) {
		if inner == nil {
			continue
		}
		lib, said := inner.Error(), Message(inner, w)
		if said != lib {
			msg = strings.Replace(msg, lib, said, 1)
		}
	}
	return msg
}

// unwrap returns the errors err wraps.
func unwrap(err error) []error {
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		return []error{u.Unwrap()}
	case interface{ Unwrap() []error }:
		return u.Unwrap()
	}
	return nil
}
