package cli

import (
	"errors"
	"io"
	"strings"

	"github.com/geocompact/geocompact/internal/remedy"
	"github.com/geocompact/geocompact/maintain"
	"github.com/geocompact/geocompact/sql"
	"github.com/geocompact/geocompact/sql/procedure"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/table/layouts"
	"github.com/geocompact/geocompact/table/optval"
	"github.com/geocompact/geocompact/table/where"
)

// usageErrors mark the library errors that are a mistake in what the
// user asked for (an option, a predicate, a statement, a layout, a policy)
// rather than a failure of the table or the catalog.
var usageErrors = []error{optval.ErrBad, where.ErrInvalid, layouts.ErrChange, sql.ErrInvalid, procedure.ErrCall,
	catalogs.ErrBadIdentifier, maintain.ErrPolicy, maintain.ErrRetentionFloor, maintain.ErrDuration}

// IsUsage reports whether err is a mistake in what the user asked for
// (see usageErrors): the one place the binaries decide it. A command
// asks it of an error returned before anything was written; an error
// after that (a rewrite that failed part way) keeps exit code 1.
func IsUsage(err error) bool {
	for _, u := range usageErrors {
		if errors.Is(err, u) {
			return true
		}
	}
	return false
}

// advice are library words in the messages of the errors is matches, and
// the command line's words for them: the where predicate, which a message
// names as a setting rather than as a remedy.
var advice = []struct {
	is         func(error) bool
	lib, words string
}{
	{anyError, "where predicate on ", "--where on "},
	{anyError, "for the where predicate: ", "for --where: "},
	{anyError, "which a where predicate cannot compare", "which --where cannot compare"},
}

func anyError(error) bool { return true }

func is[E error](err error) bool {
	_, ok := errors.AsType[E](err)
	return ok
}

// Worded returns err (nil for nil) with the message Words gives it, for a
// binary whose errors are printed by cobra; errors.Is and errors.As see
// through it to err.
func Worded(err error) error {
	if err == nil {
		return nil
	}
	return &worded{err}
}

type worded struct{ err error }

func (w *worded) Error() string { return Words(w.err) }
func (w *worded) Unwrap() error { return w.err }

// Words returns err's message in the command line's terms: the library
// says what to change in its own terms (a curve, an option, allowing a
// layout change) as a remedy its error carries; here each remedy becomes
// the flag or command that does it (remedyWords). The rest of the message
// is kept as it is.
func Words(err error) string {
	msg := remedy.Message(err, sayRemedy)
	say := func(lib, words string) { msg = strings.Replace(msg, lib, words, 1) }
	for _, a := range advice {
		if a.is(err) {
			say(a.lib, a.words)
		}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		msg += cutShort
	}
	return msg
}

// cutShort follows an error whose read ended before the data it expected:
// a connection to the store closed mid-object (a server stopped, a proxy
// timed out) or a truncated file. The library's words for it are only
// "unexpected EOF".
const cutShort = " (the read ended early: the connection to the store was cut, or the file is truncated)"

// reasonWords turns the library's advice in a result's reason (why a
// rewrite did nothing) into the command line's flags.
var reasonWords = strings.NewReplacer(
	"set the option ", "pass --option ",
	"the where filter's scope", "the --where scope",
	"the where filter ", "--where ",
)

// Reason words a result's reason for the command line.
func Reason(s string) string { return reasonWords.Replace(s) }
