package cli_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/stretchr/testify/assert"

	"github.com/geocompact/geocompact/alter"
	"github.com/geocompact/geocompact/cmd/internal/cli"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/maintain"
	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/table/deltatable"
	"github.com/geocompact/geocompact/table/layouts"
	"github.com/geocompact/geocompact/table/optval"
)

// check returns the error of a Check.
func check[T any](_ T, err error) error { return err }

// TestRemedyMessages pins each remedy's whole message, in the library's
// words and in the command line's: the command line words the remedy an
// error carries, so both stay as they were when the words were matched in
// the message text.
func TestRemedyMessages(t *testing.T) {
	_, _, errLayout := layouts.FromProperties("db.t", map[string]string{layouts.Prop: "spiral("})
	_, errNoGeometry := spatial.DiscoverColumns(arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil), nil, spatial.Hints{})
	for _, tc := range []struct {
		name     string
		err      error
		lib, cli string
	}{
		{"curve and sort order",
			check(engine.Request{Curve: "hilbert", SortOrder: "a"}.Check()),
			"engine: bad option: give a curve or a sort order, not both",
			"engine: bad option: give --curve or --sort-order, not both"},
		{"binpack and curve",
			check(engine.Request{Strategy: engine.BinPack, Curve: "hilbert"}.Check()),
			"engine: bad option: strategy binpack does not sort; drop strategy binpack to use the sort order",
			"engine: bad option: strategy binpack does not sort; drop --strategy binpack to use the sort order"},
		{"option without value",
			check(engine.Request{Options: map[string]string{engine.OptMinInputFiles: ""}}.Check()),
			"engine: bad option: option min-input-files needs a value",
			"engine: bad option: option min-input-files needs a value: --option min-input-files=VALUE"},
		{"bad property",
			check(engine.Request{}.OptionsFor(map[string]string{"write.target-file-size-bytes": "big"})),
			"engine: bad option: table property write.target-file-size-bytes=\"big\" is not a positive size of at most 1024TiB (1125899906842624 bytes); set it to a value such as 128MiB",
			"engine: bad option: table property write.target-file-size-bytes=\"big\" is not a positive size of at most 1024TiB (1125899906842624 bytes); fix it with geocompact alter --set write.target-file-size-bytes=128MiB"},
		{"bad layout property",
			fmt.Errorf("open: %w", errLayout),
			"open: engine: bad option: table db.t: property geocompact.layout=\"spiral(\": cluster: sort order: unexpected token \"(\" after column \"spiral\"; record a layout on the table, or remove property geocompact.layout",
			"open: engine: bad option: table db.t: property geocompact.layout=\"spiral(\": cluster: sort order: unexpected token \"(\" after column \"spiral\"; record a layout with geocompact alter --table db.t --curve hilbert, or --unset geocompact.layout"},
		{"nothing to alter",
			check(alter.Request{}.Check()),
			"engine: bad option: nothing to alter: give a curve, a sort order, unsorted, properties to set or properties to unset",
			"engine: bad option: nothing to alter: give --curve, --sort-order, --unsorted, --set KEY=VALUE or --unset KEY"},
		{"unsorted and curve",
			check(alter.Request{Unsorted: true, Curve: "hilbert"}.Check()),
			"engine: bad option: unsorted records no layout, a curve or a sort order records one: give one of them",
			"engine: bad option: --unsorted records no layout, --curve and --sort-order record one: give one of them"},
		{"layout twice",
			check(alter.Request{Curve: "hilbert", Set: map[string]string{layouts.Prop: "zorder()"}}.Check()),
			"engine: bad option: give the layout by a curve or a sort order, or by setting geocompact.layout, not both",
			"engine: bad option: give the layout by --curve or --sort-order, or by --set geocompact.layout, not both"},
		{"unsorted and layout property",
			check(alter.Request{Unsorted: true, Set: map[string]string{layouts.Prop: "zorder()"}}.Check()),
			"engine: bad option: unsorted removes geocompact.layout: do not set it too",
			"engine: bad option: --unsorted removes geocompact.layout: do not --set it too"},
		{"layout change",
			fmt.Errorf("rewrite: %w", &layouts.ChangeError{Table: "db.t", Recorded: "hilbert()", Source: layouts.FromProperty, Requested: "binpack"}),
			"rewrite: table db.t is laid out by hilbert() (table property geocompact.layout); this rewrite would lay it out by binpack instead and lose that clustering: request no layout to keep the table's layout, allow the layout change to rewrite it anyway, or record the new layout on table db.t",
			"rewrite: table db.t is laid out by hilbert() (table property geocompact.layout); this rewrite would lay it out by binpack instead and lose that clustering: drop the layout flags to keep the table's layout, pass --allow-layout-change (in a maintain policy, rewrite.allow-layout-change: true) to rewrite it anyway, or record the new layout with geocompact alter --table db.t"},
		{"invalid geometry",
			fmt.Errorf("rewrite group 1: %w", &engine.GeometryError{Table: "db.t", Violations: 2, Codes: []string{"wkb.ring", "x"}, First: "; first at row 3"}),
			"rewrite group 1: engine: invalid geometry: 2 geometry violations (wkb.ring, x); first at row 3; nothing was written or committed: validate table db.t, or set option validate-geometry=false to compact it as it is",
			"rewrite group 1: engine: invalid geometry: 2 geometry violations (wkb.ring, x); first at row 3; nothing was written or committed: run geocompact validate --table db.t, or pass --option validate-geometry=false to compact it as it is"},
		{"auto distributed",
			fmt.Errorf("x: %w", engine.ErrAutoDistributed),
			"x: engine: bad option: curve auto is chosen per group by a local rewrite; a distributed rewrite needs a fixed layout: a local dry run with curve auto shows the choice, then request that curve",
			"x: engine: bad option: --curve auto is chosen per group by a local rewrite; a distributed rewrite needs a fixed layout: rewrite --curve auto --dry-run shows the choice, then pass that curve"},
		{"no order",
			fmt.Errorf("%w: strategy sort needs an order, and table %s has no sort order; %w", optval.ErrBad, "db.t", engine.ErrNoOrder),
			"engine: bad option: strategy sort needs an order, and table db.t has no sort order; give a curve (hilbert, zorder or linear) or a sort order",
			"engine: bad option: strategy sort needs an order, and table db.t has no sort order; pass --curve hilbert (or zorder, linear) or --sort-order EXPR"},
		{"no where",
			fmt.Errorf("%w: %w for table %s: rewrite it whole, or scope the rewrite with %s", optval.ErrBad, engine.ErrNoWhere, "db.t", "max"),
			"engine: bad option: a where predicate is not available for table db.t: rewrite it whole, or scope the rewrite with max",
			"engine: bad option: --where is not available for table db.t: rewrite it whole, or scope the rewrite with max"},
		{"auto without boxes",
			fmt.Errorf("choose layout of group %d (%s): %w", 1, "p", engine.ErrAutoNoBoxes),
			"choose layout of group 1 (p): no row has a bounding box to place; give a curve or a sort order",
			"choose layout of group 1 (p): no row has a bounding box to place; pass --curve or --sort-order"},
		{"name the geometry",
			fmt.Errorf("%w: sort order %s: table %s has no column %q; its columns are %s; %w", optval.ErrBad, "hilbert()", "db.t", "bbox_minx", "a, b", engine.ErrNameGeometry),
			"engine: bad option: sort order hilbert(): table db.t has no column \"bbox_minx\"; its columns are a, b; no geometry column was found either: name the WKB column with the table property geocompact.geometry.column",
			"engine: bad option: sort order hilbert(): table db.t has no column \"bbox_minx\"; its columns are a, b; no geometry column was found either: name the WKB column with the table property geocompact.geometry.column (geocompact alter --set geocompact.geometry.column=COLUMN)"},
		{"delta target size",
			fmt.Errorf("alter /t: %w", deltatable.ErrTargetFileSize),
			"alter /t: a Delta table's target file size is delta.targetFileSize, which other Delta writers honour too: set it instead",
			"alter /t: a Delta table's target file size is delta.targetFileSize, which other Delta writers honour too: use --set delta.targetFileSize=128MiB"},
		{"retention floor",
			fmt.Errorf("orphans: %w", maintain.CheckRetention("orphans", time.Minute, false)),
			"orphans: orphans older than 1m is below the 1h retention floor: a writer that has not committed yet may own files no metadata references; force it if you are sure",
			"orphans: orphans older than 1m is below the 1h retention floor: a writer that has not committed yet may own files no metadata references; use --force if you are sure"},
		{"where on delta",
			fmt.Errorf("%w: where predicate on Delta table /t: bad", optval.ErrBad),
			"engine: bad option: where predicate on Delta table /t: bad",
			"engine: bad option: --where on Delta table /t: bad"},
		{"where cannot compare",
			fmt.Errorf("plan files of %s for the where predicate: %w", "db.t", errors.New(`column "g" has type binary, which a where predicate cannot compare`)),
			"plan files of db.t for the where predicate: column \"g\" has type binary, which a where predicate cannot compare",
			"plan files of db.t for --where: column \"g\" has type binary, which --where cannot compare"},
		{"no geometry column, wrapped",
			fmt.Errorf("ingest f.parquet: %w", errNoGeometry),
			"ingest f.parquet: no geometry column: name one with the geometry column setting, the table property geocompact.geometry.column or GeoParquet metadata",
			"ingest f.parquet: no geometry column: name one with --geometry-column, the table property geocompact.geometry.column or GeoParquet metadata"},
		{"no geometry column",
			errNoGeometry,
			"no geometry column: name one with the geometry column setting, the table property geocompact.geometry.column or GeoParquet metadata",
			"no geometry column: name one with --geometry-column, the table property geocompact.geometry.column or GeoParquet metadata"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.lib, tc.err.Error())
			assert.Equal(t, tc.cli, cli.Words(tc.err))
		})
	}
}
