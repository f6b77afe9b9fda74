package cli_test

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/alter"
	"github.com/geocompact/geocompact/cmd/internal/cli"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/ingest"
	"github.com/geocompact/geocompact/maintain"
	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/table/layouts"
	"github.com/geocompact/geocompact/table/optval"
)

// TestWords checks that the library's errors, which speak of curves,
// options and layout changes, are worded as flags where the command line
// prints them, with the rest of the message kept.
func TestWords(t *testing.T) {
	_, errBoth := engine.Request{Curve: "hilbert", SortOrder: "a"}.Check()
	_, errBinPack := engine.Request{Strategy: engine.BinPack, Curve: "hilbert"}.Check()
	_, errMissing := engine.Request{Options: map[string]string{engine.OptMinInputFiles: ""}}.Check()
	_, errProp := engine.Request{}.OptionsFor(map[string]string{"write.target-file-size-bytes": "big"})
	_, _, errLayout := layouts.FromProperties("db.t", map[string]string{layouts.Prop: "spiral("})
	_, errAlter := alter.Request{}.Check()
	change := fmt.Errorf("rewrite: %w", &layouts.ChangeError{Table: "db.t", Recorded: "hilbert()", Source: layouts.FromProperty, Requested: "binpack"})
	geometry := fmt.Errorf("rewrite group 1: %w", &engine.GeometryError{Table: "db.t", Violations: 2, Codes: []string{"wkb.ring"}})
	_, errNoGeometry := spatial.DiscoverColumns(arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil), nil, spatial.Hints{})
	for _, tc := range []struct {
		err       error
		lib, want string
	}{
		{errBoth, "give a curve or a sort order, not both", "give --curve or --sort-order, not both"},
		{errBinPack, "drop strategy binpack", "strategy binpack does not sort; drop --strategy binpack to use the sort order"},
		{errMissing, "option min-input-files needs a value", "option min-input-files needs a value: --option min-input-files=VALUE"},
		{errProp, `table property write.target-file-size-bytes="big" is not a positive size`, "; fix it with geocompact alter --set write.target-file-size-bytes=128MiB"},
		{errLayout, "remove property geocompact.layout", "; record a layout with geocompact alter --table db.t --curve hilbert, or --unset geocompact.layout"},
		{errAlter, "nothing to alter: give a curve", "nothing to alter: give --curve, --sort-order, --unsorted, --set KEY=VALUE or --unset KEY"},
		{change, "allow the layout change", "rewrite: table db.t is laid out by hilbert() (table property geocompact.layout); this rewrite would lay it out by binpack instead " +
			"and lose that clustering: drop the layout flags to keep the table's layout, pass --allow-layout-change (in a maintain policy, " +
			"rewrite.allow-layout-change: true) to rewrite it anyway, or record the new layout with geocompact alter --table db.t"},
		{geometry, "validate table db.t, or set option validate-geometry=false", "rewrite group 1: engine: invalid geometry: 2 geometry violations (wkb.ring); " +
			"nothing was written or committed: run geocompact validate --table db.t, or pass --option validate-geometry=false to compact it as it is"},
		{fmt.Errorf("x: %w", engine.ErrAutoDistributed), "curve auto is chosen", "x: engine: bad option: --curve auto is chosen per group"},
		{fmt.Errorf("table a.b does not exist (%w)", ingest.ErrNoTable), "create it from the files", "table a.b does not exist (use --create to make it from the files)"},
		{&ingest.ExtraColumnsError{Columns: []string{"id"}}, "leave them out, or add them to the table as optional columns",
			`columns the table lacks: "id" (use --drop-extra-columns to leave them out, or --add-columns to add them to the table as optional columns)`},
		{&maintain.RetentionError{What: "snapshots", Age: time.Hour}, "; force it if you are sure", "; use --force if you are sure"},
		{fmt.Errorf("ingest: %w", errNoGeometry), "the geometry column setting", "ingest: no geometry column: name one with --geometry-column, the table property"},
	} {
		require.Error(t, tc.err, tc.want)
		assert.Contains(t, tc.err.Error(), tc.lib, "the library's own words")
		assert.NotContains(t, tc.err.Error(), "--", "the library speaks of no flag")
		assert.Contains(t, cli.Words(tc.err), tc.want)
	}
	where := fmt.Errorf("%w: where predicate on Delta table /t: bad", optval.ErrBad)
	assert.Equal(t, "engine: bad option: --where on Delta table /t: bad", cli.Words(where))
	plain := errors.New("engine: something else")
	assert.Equal(t, plain.Error(), cli.Words(plain))
	w := cli.Worded(fmt.Errorf("x: %w", engine.ErrAutoDistributed))
	assert.Contains(t, w.Error(), "--curve auto is chosen per group")
	assert.ErrorIs(t, w, optval.ErrBad, "Worded keeps the chain")
	assert.NoError(t, cli.Worded(nil))
}

func TestIsUsage(t *testing.T) {
	_, err := engine.Request{Curve: "spiral"}.Check()
	assert.True(t, cli.IsUsage(err))
	assert.True(t, cli.IsUsage(fmt.Errorf("run: %w", &layouts.ChangeError{})))
	assert.True(t, cli.IsUsage(fmt.Errorf("%w: x", maintain.ErrRetentionFloor)))
	assert.True(t, cli.IsUsage(fmt.Errorf("%w: x", optval.ErrBad)))
	assert.False(t, cli.IsUsage(&engine.GeometryError{}), "bad data is no usage mistake")
	assert.False(t, cli.IsUsage(errors.New("catalog unreachable")))
}

// TestWordsReadCutShort checks that a read a stopped server cut short
// names the connection, through the wrapping iceberg-go's file IO gives it.
func TestWordsReadCutShort(t *testing.T) {
	cut := fmt.Errorf("load table lake.pings: %w",
		&fs.PathError{Op: "ReadFile", Path: "s3://b/t/metadata/v1.metadata.json", Err: fmt.Errorf("blob: %w", io.ErrUnexpectedEOF)})
	msg := cli.Words(cut)
	assert.True(t, strings.HasPrefix(msg, cut.Error()), msg)
	assert.Contains(t, msg, "the connection to the store was cut")
	assert.Equal(t, "x: catalog unreachable", cli.Words(errors.New("x: catalog unreachable")), "other errors keep their words")
}

func TestReasonWordsFlags(t *testing.T) {
	for in, want := range map[string]string{
		"below min-input-files=5; set the option min-input-files=4 (or rewrite-all=true) to rewrite them": "below min-input-files=5; pass --option min-input-files=4 (or rewrite-all=true) to rewrite them",
		"the table (or the where filter's scope) has no data files":                                       "the table (or the --where scope) has no data files",
		`no data file may hold rows matching the where filter "ts > 3" (4 files in the table)`:            `no data file may hold rows matching --where "ts > 3" (4 files in the table)`,
	} {
		assert.Equal(t, want, cli.Reason(in))
	}
}
