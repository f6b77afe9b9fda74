package cli

import (
	"fmt"

	"github.com/geocompact/geocompact/alter"
	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/ingest"
	"github.com/geocompact/geocompact/internal/remedy"
	"github.com/geocompact/geocompact/maintain"
	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/sql/procedure"
	"github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/deltatable"
	"github.com/geocompact/geocompact/table/layouts"
	"github.com/geocompact/geocompact/table/optval"
)

// remedyWords are the command line's words for each remedy a library
// error carries: the flag or command that does it. Every remedy.Kind the
// binary links has an entry (TestEveryRemedyHasWords).
var remedyWords = map[*remedy.Kind]remedy.Wording{
	engine.RemedyOneOrder:  words("give --curve or --sort-order, not both"),
	engine.RemedyNoBinPack: words("drop --strategy binpack to use the sort order"),
	engine.RemedyGiveOrder: words("pass --curve hilbert (or zorder, linear) or --sort-order EXPR"),
	engine.RemedyNoWhere:   words("--where is not available"),
	engine.RemedyNotAuto:   words("pass --curve or --sort-order"),
	engine.RemedyFixedCurve: words("--curve auto is chosen per group by a local rewrite; a distributed rewrite needs a fixed layout: " +
		"rewrite --curve auto --dry-run shows the choice, then pass that curve"),
	engine.RemedyNameGeometry: func(a remedy.Advice) string {
		return fmt.Sprintf("name the WKB column with the table property %s (geocompact alter --set %[1]s=COLUMN)", a.Name)
	},
	engine.RemedyValidate: func(a remedy.Advice) string {
		return fmt.Sprintf("run geocompact validate --table %s, or pass --option %s=false to compact it as it is", a.Table, a.Name)
	},
	alter.RemedyOneLayout: words("--unsorted records no layout, --curve and --sort-order record one: give one of them"),
	alter.RemedySomething: words("nothing to alter: give --curve, --sort-order, --unsorted, --set KEY=VALUE or --unset KEY"),
	alter.RemedyLayoutOnce: func(a remedy.Advice) string {
		return "give the layout by --curve or --sort-order, or by --set " + a.Name + ", not both"
	},
	alter.RemedyUnsortedAlone:        func(a remedy.Advice) string { return "--unsorted removes " + a.Name + ": do not --set it too" },
	deltatable.RemedyDeltaTargetSize: func(a remedy.Advice) string { return "use --set " + a.Name + "=128MiB" },
	layouts.RemedyChange: func(a remedy.Advice) string {
		return "drop the layout flags to keep the table's layout, pass --allow-layout-change " +
			"(in a maintain policy, rewrite.allow-layout-change: true) to rewrite it anyway, or record the new layout with geocompact alter --table " + a.Table
	},
	layouts.RemedyProperty: func(a remedy.Advice) string {
		return fmt.Sprintf("record a layout with geocompact alter --table %s --curve hilbert, or --unset %s", a.Table, a.Name)
	},
	optval.RemedyValue: func(a remedy.Advice) string { return "--option " + a.Name + "=VALUE" },
	optval.RemedyProperty: func(a remedy.Advice) string {
		return fmt.Sprintf("fix it with geocompact alter --set %s=%s", a.Name, a.Value)
	},
	spatial.RemedyGeometryColumn: func(a remedy.Advice) string {
		return "name one with --geometry-column, the table property " + a.Name + " or GeoParquet metadata"
	},
	maintain.RemedyForce:          words("use --force if you are sure"),
	bench.RemedyBBoxColumns:       words("write them with the rows (ingest --delta adds them) or measure the table with metrics --delta"),
	table.RemedyCreate:            words("use --create to make it from the files"),
	table.RemedyTablePartitioning: words("drop --partition-by"),
	table.RemedyLeaveColumnsOut:   words("use --drop-extra-columns to leave them out"),
	ingest.RemedyAddBBox:          words("use --add-bbox"),
	ingest.RemedyRecursive:        words("use --recursive for subdirectories"),
	ingest.RemedyExtraColumns:     words("use --drop-extra-columns to leave them out, or --add-columns to add them to the table as optional columns"),
	procedure.RemedyRetain: func(a remedy.Advice) string {
		return "retain at least " + a.Value + " HOURS, leave RETAIN out, or pass --force (as Spark's " +
			"spark.databricks.delta.retentionDurationCheck.enabled=false does)"
	},
}

// words is a remedy's fixed words.
func words(s string) remedy.Wording { return func(remedy.Advice) string { return s } }

// sayRemedy words a remedy for the command line; one it has no words for
// keeps the library's.
func sayRemedy(a remedy.Advice) string {
	if w, ok := remedyWords[a.Kind]; ok {
		return w(a)
	}
	return remedy.Library(a)
}

// HasWords reports whether the command line has its own words for k.
func HasWords(k *remedy.Kind) bool {
	_, ok := remedyWords[k]
	return ok
}
