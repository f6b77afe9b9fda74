// Package alter records a table's layout and properties, as Spark's
// ALTER TABLE ... WRITE ORDERED BY and SET/UNSET TBLPROPERTIES do: the
// layout a rewrite without --strategy, --curve or --sort-order applies
// (see icebergtable.Layout) and properties such as the target file size.
package alter

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/geocompact/geocompact/cluster"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/internal/remedy"
	"github.com/geocompact/geocompact/internal/suggest"
	format "github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/table/icebergtable"
	"github.com/geocompact/geocompact/table/layouts"
	"github.com/geocompact/geocompact/table/optval"
)

// Request changes the layout a table records and its properties,
// as Spark's ALTER TABLE ... WRITE ORDERED BY and SET/UNSET
// TBLPROPERTIES do.
type Request struct {
	// Curve records a curve layout by its name (cluster.CurveNames).
	Curve string
	// SortOrder records a sort order in cluster.ParseOrder's syntax.
	// A plain column order becomes the table's Iceberg sort order; a
	// curve, and a linear order over columns the table lacks, is kept in
	// layouts.Prop (see there).
	SortOrder string
	// Unsorted records no layout, as Spark's ALTER TABLE ... WRITE
	// UNORDERED does: the Iceberg sort order becomes unsorted and
	// layouts.Prop is removed, so a rewrite without --strategy, --curve or
	// --sort-order bin-packs. It excludes Curve and SortOrder.
	Unsorted bool
	// Set sets table properties. Values of size properties (IsSizeProperty)
	// take units ("128MiB", "1GB") and are stored as byte counts.
	Set map[string]string
	// Unset removes table properties; keys not set are ignored.
	Unset []string

	// layout is the layout Curve, SortOrder or Set's layouts.Prop gives,
	// as Check parsed it (nil for none, or for an unchecked request).
	layout *layout
}

// layout is a layout parsed once and carried as a value.
type layout struct {
	order cluster.Order
	auto  bool
	// prop is set when the layout came as layouts.Prop in Set.
	prop bool
}

// text is the layout's canonical text, as layouts.Prop records it.
func (l *layout) text() string { return layouts.Text(l.order, l.auto) }

// Result is what Apply recorded.
type Result struct {
	Table string `json:"table"`
	// Layout is the layout the table records afterwards.
	Layout layouts.Record `json:"layout"`
	// SortOrder is the table's Iceberg sort order afterwards ("" unsorted).
	SortOrder string `json:"sort_order"`
	// Set holds the properties set, with their stored values.
	Set map[string]string `json:"set"`
	// Unset lists the properties removed.
	Unset []string `json:"unset"`
	// Version is the Delta table version the change was committed as
	// (nil for an Iceberg table).
	Version *int64 `json:"version,omitempty"`
}

// knownProperties are the table properties a --set key is checked
// against for a likely misspelling; other keys are set as given.
var knownProperties = []string{
	layouts.Prop, table.WriteTargetFileSizeBytesKey, table.ParquetRowGroupLimitKey, table.ParquetRowGroupSizeBytesKey,
	table.ParquetPageSizeBytesKey, table.ParquetCompressionKey, table.MetricsModeColumnConfPrefix + "default",
	table.ManifestTargetSizeBytesKey, table.ManifestMinMergeCountKey, table.ManifestMergeEnabledKey,
	"write.delete.target-file-size-bytes", "history.expire.max-snapshot-age-ms", "history.expire.min-snapshots-to-keep", "gc.enabled",
}

// IsSizeProperty reports whether the table property key holds a byte
// count: its name ends in "-bytes" or "target-size", as Iceberg names
// them (write.target-file-size-bytes, read.split.target-size).
func IsSizeProperty(key string) bool {
	return strings.HasSuffix(key, "-bytes") || strings.HasSuffix(key, "target-size")
}

// Check validates the request without a table: the layout parses, keys
// are well formed and not misspelt known ones, size values parse, and a
// key is not both set and unset. It returns the request with size values
// as byte counts. Errors wrap optval.ErrBad.
func (r Request) Check() (Request, error) { return r.check(icebergRules) }

// keyRules are a table format's rules for property keys and values.
type keyRules format.PropertyRules

var icebergRules = keyRules{Known: knownProperties, IsSize: IsSizeProperty}

// Reasons a Request is refused. Each is its remedy (package remedy),
// which a front end words as its own flags; errors.Is matches them.
var (
	// ErrUnsortedAndLayout: Unsorted with a curve or a sort order.
	ErrUnsortedAndLayout error = &remedy.Error{Advice: remedy.Advice{Kind: RemedyOneLayout}}
	// ErrNothing: a request that changes nothing.
	ErrNothing error = &remedy.Error{Advice: remedy.Advice{Kind: RemedySomething}}
	// ErrLayoutTwice: a curve or a sort order and layouts.Prop set too.
	ErrLayoutTwice error = &remedy.Error{Advice: remedy.Advice{Kind: RemedyLayoutOnce, Name: layouts.Prop}}
	// ErrUnsortedAndProp: Unsorted with layouts.Prop set.
	ErrUnsortedAndProp error = &remedy.Error{Advice: remedy.Advice{Kind: RemedyUnsortedAlone, Name: layouts.Prop}}
)

// What a user can do about the errors above, in the library's words.
var (
	// RemedyOneLayout: give unsorted, or a curve or a sort order.
	RemedyOneLayout = remedy.Define("alter.one-layout", func(remedy.Advice) string {
		return "unsorted records no layout, a curve or a sort order records one: give one of them"
	})
	// RemedySomething: give something to alter.
	RemedySomething = remedy.Define("alter.something", func(remedy.Advice) string {
		return "nothing to alter: give a curve, a sort order, unsorted, properties to set or properties to unset"
	})
	// RemedyLayoutOnce: give the layout once, by an order or by the
	// property Name (layouts.Prop).
	RemedyLayoutOnce = remedy.Define("alter.layout-once", func(a remedy.Advice) string {
		return "give the layout by a curve or a sort order, or by setting " + a.Name + ", not both"
	})
	// RemedyUnsortedAlone: do not set the property Name (layouts.Prop)
	// that unsorted removes.
	RemedyUnsortedAlone = remedy.Define("alter.unsorted-alone", func(a remedy.Advice) string {
		return "unsorted removes " + a.Name + ": do not set it too"
	})
)

// Precheck checks what of the request no table's rules change: one of
// a curve, a sort order or unsorted at most, something to alter, and a
// layout that parses. A front end calls it before it opens the table;
// Apply checks the whole request against the table. Errors wrap
// optval.ErrBad.
func (r Request) Precheck() error {
	_, err := r.checkLayout()
	return err
}

// checkLayout is Precheck, returning the layout the request gives (nil
// for none).
func (r Request) checkLayout() (*layout, error) {
	if r.Curve != "" && r.SortOrder != "" {
		return nil, fmt.Errorf("%w: %w", optval.ErrBad, engine.ErrCurveAndSortOrder)
	}
	if r.Unsorted && (r.Curve != "" || r.SortOrder != "") {
		return nil, fmt.Errorf("%w: %w", optval.ErrBad, ErrUnsortedAndLayout)
	}
	if !r.Unsorted && r.Curve == "" && r.SortOrder == "" && len(r.Set) == 0 && len(r.Unset) == 0 {
		return nil, fmt.Errorf("%w: %w", optval.ErrBad, ErrNothing)
	}
	lay, err := r.parseLayout()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", optval.ErrBad, err)
	}
	return lay, nil
}

func (r Request) check(rules keyRules) (Request, error) {
	lay, err := r.checkLayout()
	if err != nil {
		return r, err
	}
	set := make(map[string]string, len(r.Set))
	for _, k := range slices.Sorted(maps.Keys(r.Set)) {
		v, prop, err := rules.property(k, r.Set[k])
		if err != nil {
			return r, err
		}
		if prop != nil && lay == nil {
			lay = prop
		}
		if slices.Contains(r.Unset, k) {
			return r, fmt.Errorf("%w: property %s is both set and unset", optval.ErrBad, k)
		}
		set[k] = v
	}
	if _, ok := set[layouts.Prop]; ok && (r.Curve != "" || r.SortOrder != "") {
		return r, fmt.Errorf("%w: %w", optval.ErrBad, ErrLayoutTwice)
	}
	if _, ok := set[layouts.Prop]; ok && r.Unsorted {
		return r, fmt.Errorf("%w: %w", optval.ErrBad, ErrUnsortedAndProp)
	}
	for _, k := range r.Unset {
		if err := rules.key(k, "", true); err != nil {
			return r, err
		}
	}
	r.Set, r.layout = set, lay
	return r, nil
}

// key refuses an empty key, a likely misspelling of a known one, and
// what the format's own check refuses.
func (rules keyRules) key(k, v string, unset bool) error {
	if strings.TrimSpace(k) == "" || strings.ContainsAny(k, " \t\n=") {
		return fmt.Errorf("%w: property key %q: want a name such as %s", optval.ErrBad, k, rules.Known[1])
	}
	if !slices.Contains(rules.Known, k) {
		if hint := suggest.Hint(k, rules.Known); hint != "" {
			return fmt.Errorf("%w: unknown property %q%s", optval.ErrBad, k, hint)
		}
	}
	if rules.Check != nil {
		if err := rules.Check(k, v, unset); err != nil {
			return fmt.Errorf("%w: %w", optval.ErrBad, err)
		}
	}
	return nil
}

// property checks one --set pair and returns the value to store, and
// for layouts.Prop the layout it records.
func (rules keyRules) property(k, v string) (string, *layout, error) {
	var lay *layout
	switch {
	case k == layouts.Prop:
		o, auto, err := layouts.Parse(v)
		if err != nil {
			return "", nil, fmt.Errorf("%w: %s=%q: %w", optval.ErrBad, k, v, err)
		}
		lay = &layout{order: o, auto: auto, prop: true}
	case rules.IsSize(k):
		n, err := optval.ParseSize(v)
		switch {
		case err == nil && n <= 0:
			err = fmt.Errorf("want a positive size")
		case err == nil && n > engine.MaxFileSize:
			err = fmt.Errorf("want at most %s", optval.FormatLimit(engine.MaxFileSize))
		}
		if err != nil {
			return "", nil, fmt.Errorf("%w: %s=%q: %w", optval.ErrBad, k, v, err)
		}
		v = strconv.FormatInt(n, 10)
	}
	return v, lay, rules.key(k, v, false)
}

// parseLayout parses the layout the request's Curve or SortOrder gives
// (nil for none).
func (r Request) parseLayout() (*layout, error) {
	var o cluster.Order
	var auto bool
	var err error
	switch {
	case r.Curve != "":
		o, auto, err = cluster.ParseCurve(r.Curve)
	case r.SortOrder != "":
		o, auto, err = layouts.Parse(r.SortOrder)
	default:
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &layout{order: o, auto: auto}, nil
}

// Apply records the request's layout and properties on t, opened for
// writing, in one commit.
//
// On an Iceberg table (icebergtable.Table) a layout replaces the recorded
// one: a plain column order becomes the Iceberg sort order (and
// layouts.Prop is removed); any other layout goes into layouts.Prop, and
// the Iceberg sort order is reset to unsorted so that writers do not
// re-sort the curve's files by another order. Unsorted resets the sort
// order and removes layouts.Prop. A sort order naming a column the table
// lacks is refused, listing the table's columns.
//
// A format that keeps its own properties (propertyTable: a Delta table)
// has no sort order: any layout is kept in layouts.Prop, checked first
// against the table's columns as a rewrite checks it, and Unsorted
// removes layouts.Prop; the properties are checked by the format's rules
// and committed by it.
func Apply(ctx context.Context, t format.Table, req Request) (*Result, error) {
	if pt, ok := t.Format.(propertyTable); ok {
		return applyProperties(ctx, t, pt, req)
	}
	it, err := icebergOf(t)
	if err != nil {
		return nil, err
	}
	return applyIceberg(ctx, it.Catalog, it.Name, req)
}

// Validate checks the request against t as Apply does (the request, the
// table, the layout's columns) and commits nothing, so that a script can
// check all its statements before the first one runs.
func Validate(ctx context.Context, t format.Table, req Request) error {
	if pt, ok := t.Format.(propertyTable); ok {
		_, _, err := stageProperties(t, pt, req)
		return err
	}
	it, err := icebergOf(t)
	if err != nil {
		return err
	}
	_, err = stage(ctx, it.Catalog, it.Name, req)
	return err
}

// icebergOf is t's Iceberg table, loaded from its catalog.
func icebergOf(t format.Table) (*icebergtable.Table, error) {
	it, ok := t.Format.(*icebergtable.Table)
	if !ok {
		return nil, fmt.Errorf("alter %s: the table's format records no layout or properties", t.Name)
	}
	return it, nil
}

// applyIceberg is Apply of the Iceberg table called name in cat: the
// change is staged on the table as it is at each commit attempt.
func applyIceberg(ctx context.Context, cat catalog.Catalog, name string, req Request) (*Result, error) {
	var st *staged
	var tbl *table.Table
	err := catalogs.CommitRetried(ctx, cat, name, 0, func(ctx context.Context) (*table.Table, error) {
		var err error
		if st, err = stage(ctx, cat, name, req); err != nil {
			return nil, err
		}
		if tbl, err = st.tx.Commit(ctx); err != nil {
			return nil, fmt.Errorf("alter %s: commit: %w", name, err)
		}
		return tbl, nil
	})
	if err != nil {
		return nil, err
	}
	rec, err := icebergtable.Layout(tbl)
	if err != nil {
		return nil, err
	}
	res := &Result{Table: name, Layout: rec, Set: st.set, Unset: st.unset}
	if o, ok := icebergtable.SortOrder(tbl); ok {
		res.SortOrder = o.String()
	}
	return res, nil
}

// staged is a change Apply has checked and staged, not yet committed.
type staged struct {
	tx    *table.Transaction
	set   map[string]string
	unset []string
}

// stage checks req, loads the table and stages the change in a
// transaction.
func stage(ctx context.Context, cat catalog.Catalog, name string, req Request) (*staged, error) {
	req, err := req.Check()
	if err != nil {
		return nil, err
	}
	tbl, err := catalogs.LoadTable(ctx, catalogs.Wrap(cat), name)
	if err != nil {
		return nil, err
	}
	st := &staged{tx: tbl.NewTransaction(), set: maps.Clone(req.Set), unset: slices.Clone(req.Unset)}
	if err := stageLayout(tbl, st, req); err != nil {
		return nil, err
	}
	if err := st.tx.SetProperties(iceberg.Properties(st.set)); err != nil {
		return nil, fmt.Errorf("alter %s: set properties: %w", name, err)
	}
	if err := st.tx.RemoveProperties(st.unset); err != nil {
		return nil, fmt.Errorf("alter %s: unset properties: %w", name, err)
	}
	return st, nil
}

// stageLayout adds the request's layout to st: the Iceberg sort order or
// layouts.Prop (into set, or its removal into unset).
func stageLayout(tbl *table.Table, st *staged, req Request) error {
	lay := req.layout
	if lay != nil && lay.prop {
		lay = nil // a property like any other
	}
	if lay == nil && !req.Unsorted {
		return nil
	}
	so, plain := table.UnsortedSortOrder, req.Unsorted
	if lay != nil {
		if err := engine.CheckLayoutColumns(icebergtable.Describe(tbl), lay.order, lay.auto); err != nil {
			return err
		}
		if !lay.auto {
			so, plain = icebergSortOrder(tbl.Schema(), lay.order)
		}
	}
	if !plain {
		so, st.set[layouts.Prop] = table.UnsortedSortOrder, lay.text()
	} else if _, has := tbl.Properties()[layouts.Prop]; has && !slices.Contains(st.unset, layouts.Prop) {
		st.unset = append(st.unset, layouts.Prop)
	}
	if err := st.tx.ReplaceSortOrder(so); err != nil {
		return fmt.Errorf("alter %s: sort order: %w", catalogs.TableName(tbl), err)
	}
	return nil
}

// icebergSortOrder converts a linear order over columns sc holds into an
// Iceberg sort order of identity fields; false when o is a curve or names
// a column sc lacks.
func icebergSortOrder(sc *iceberg.Schema, o cluster.Order) (table.SortOrder, bool) {
	if o.Curve != cluster.CurveLinear || len(o.Fields) == 0 {
		return table.SortOrder{}, false
	}
	fields := make([]table.SortField, len(o.Fields))
	for i, f := range o.Fields {
		col, ok := sc.FindFieldByName(f.Column)
		if !ok {
			return table.SortOrder{}, false
		}
		if _, prim := col.Type.(iceberg.PrimitiveType); !prim {
			return table.SortOrder{}, false
		}
		sf := table.SortField{SourceIDs: []int{col.ID}, Transform: iceberg.IdentityTransform{}, Direction: table.SortASC, NullOrder: table.NullsFirst}
		if f.Direction == cluster.Desc {
			sf.Direction = table.SortDESC
		}
		if f.Nulls == cluster.NullsLast {
			sf.NullOrder = table.NullsLast
		}
		fields[i] = sf
	}
	so, err := table.NewSortOrder(table.InitialSortOrderID, fields)
	return so, err == nil
}
