package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/geocompact/geocompact/alter"
	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/ingest"
	"github.com/geocompact/geocompact/maintain"
	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/sql"
	"github.com/geocompact/geocompact/sql/procedure"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/table/deltatable"
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

// phrases are the library's reasons (matched with errors.Is, found in the
// message by their text) and the command line's words for them.
var phrases = []struct {
	err   error
	words string
}{
	{engine.ErrCurveAndSortOrder, "give --curve or --sort-order, not both"},
	{engine.ErrBinPackSorts, "strategy binpack does not sort; drop --strategy binpack to use the sort order"},
	{engine.ErrNoOrder, "pass --curve hilbert (or zorder, linear) or --sort-order EXPR"},
	{engine.ErrNoWhere, "--where is not available"},
	{engine.ErrAutoNoBoxes, "no row has a bounding box to place; pass --curve or --sort-order"},
	{engine.ErrAutoDistributed, fmt.Sprintf("%v: --curve auto is chosen per group by a local rewrite; a distributed rewrite needs a fixed layout: "+
		"rewrite --curve auto --dry-run shows the choice, then pass that curve", optval.ErrBad)},
	{engine.ErrNameGeometry, fmt.Sprintf("%s (geocompact alter --set %s=COLUMN)", engine.ErrNameGeometry, spatial.PropGeometryColumn)},
	{alter.ErrUnsortedAndLayout, "--unsorted records no layout, --curve and --sort-order record one: give one of them"},
	{alter.ErrNothing, "nothing to alter: give --curve, --sort-order, --unsorted, --set KEY=VALUE or --unset KEY"},
	{alter.ErrLayoutTwice, fmt.Sprintf("give the layout by --curve or --sort-order, or by --set %s, not both", layouts.Prop)},
	{alter.ErrUnsortedAndProp, fmt.Sprintf("--unsorted removes %s: do not --set it too", layouts.Prop)},
	{deltatable.ErrTargetFileSize, fmt.Sprintf("a Delta table's target file size is %s, which other Delta writers honour too: use --set %s=128MiB",
		delta.PropTargetFileSize, delta.PropTargetFileSize)},
	{ingest.ErrNoTable, "use --create to make it from the files"},
	{ingest.ErrPartitioning, "drop --partition-by"},
	{ingest.ErrNoBBox, "use --add-bbox"},
	{ingest.ErrNoFiles, "use --recursive for subdirectories"},
	{ingest.ErrNoAddColumns, "use --drop-extra-columns to leave them out"},
}

// advice are the library's closing advice in the messages of the errors
// is matches, and the command line's words for it.
var advice = []struct {
	is         func(error) bool
	lib, words string
}{
	{is[*ingest.ExtraColumnsError], ingest.ExtraColumnsAdvice,
		"use --drop-extra-columns to leave them out, or --add-columns to add them to the table as optional columns"},
	{is[*maintain.RetentionError], maintain.ForceAdvice, "use --force if you are sure"},
	{func(err error) bool { return errors.Is(err, procedure.ErrCall) }, "or force it (as Spark's", "or pass --force (as Spark's"},
	{is[*spatial.ColumnError], spatial.NoGeometryColumn,
		"no geometry column: name one with --geometry-column, the table property " + spatial.PropGeometryColumn + " or GeoParquet metadata"},
	{anyError, "where predicate on ", "--where on "},
	{anyError, "for the where predicate: ", "for --where: "},
	{anyError, "which a where predicate cannot compare", "which --where cannot compare"},
	{func(err error) bool { return errors.Is(err, bench.ErrDeltaBBoxColumns) }, bench.DeltaBBoxAdvice,
		"write them with the rows (ingest --delta adds them) or measure the table with metrics --delta"},
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
// layout change); here each of those becomes the flag or command that
// does it. The rest of the message is kept as it is.
func Words(err error) string {
	msg := err.Error()
	say := func(lib, words string) { msg = strings.Replace(msg, lib, words, 1) }
	for _, p := range phrases {
		if errors.Is(err, p.err) {
			say(p.err.Error(), p.words)
		}
	}
	for _, a := range advice {
		if a.is(err) {
			say(a.lib, a.words)
		}
	}
	if e, ok := errors.AsType[*layouts.ChangeError](err); ok {
		say(e.Error(), e.Facts()+": drop the layout flags to keep the table's layout, pass --allow-layout-change "+
			"(in a maintain policy, rewrite.allow-layout-change: true) to rewrite it anyway, or record the new layout with geocompact alter --table "+e.Table)
	}
	if e, ok := errors.AsType[*layouts.PropertyError](err); ok {
		say(e.Error(), fmt.Sprintf("%s; record a layout with geocompact alter --table %s --curve hilbert, or --unset %s", e.Facts(), e.Table, layouts.Prop))
	}
	if e, ok := errors.AsType[*optval.PropertyError](err); ok {
		say(e.Error(), fmt.Sprintf("%s; fix it with geocompact alter --set %s=%s", e.Facts(), e.Property, e.Example))
	}
	if e, ok := errors.AsType[*optval.MissingError](err); ok {
		say(e.Error(), fmt.Sprintf("%s: --option %s=VALUE", e.Error(), e.Option))
	}
	if e, ok := errors.AsType[*engine.GeometryError](err); ok {
		say(e.Error(), fmt.Sprintf("%v: %s; nothing was written or committed: %s", engine.ErrInvalidData, e.Facts(),
			e.Advice("run geocompact validate --table "+e.Table, fmt.Sprintf("pass --option %s=false", engine.OptValidateGeometry))))
	}
	return msg
}

// reasonWords turns the library's advice in a result's reason (why a
// rewrite did nothing) into the command line's flags.
var reasonWords = strings.NewReplacer(
	"set the option ", "pass --option ",
	"the where filter's scope", "the --where scope",
	"the where filter ", "--where ",
)

// Reason words a result's reason for the command line.
func Reason(s string) string { return reasonWords.Replace(s) }
