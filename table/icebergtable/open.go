package icebergtable

import (
	"context"
	"fmt"
	"slices"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/geocompact/geocompact/cluster"
	format "github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/table/layouts"
	"github.com/geocompact/geocompact/table/where"
)

// Open loads the table called name in cat at its current snapshot, as a
// rewrite plans on it.
func Open(ctx context.Context, cat catalog.Catalog, name string) (format.Table, error) {
	t, err := Load(ctx, cat, name)
	if err != nil {
		return format.Table{}, err
	}
	return t.Describe(), nil
}

// Load loads the table called name in cat and the live files of its
// current snapshot (none when it has no snapshot).
func Load(ctx context.Context, cat catalog.Catalog, name string) (*Table, error) {
	tbl, err := catalogs.LoadTable(ctx, catalogs.Wrap(cat), name)
	if err != nil {
		return nil, err
	}
	return Loaded(ctx, cat, name, tbl)
}

// Unplanned is tbl, loaded from cat as name, at its current snapshot
// with its files not planned: enough to read its metadata and to change
// its properties, not to rewrite it (its Describe has no Files).
func Unplanned(cat catalog.Catalog, name string, tbl *table.Table) *Table {
	t := &Table{Catalog: catalogs.Wrap(cat), Name: name, Table: tbl}
	if snap := tbl.CurrentSnapshot(); snap != nil {
		t.SnapshotID = snap.SnapshotID
	}
	return t
}

// Loaded is Load of tbl, already loaded from cat as name.
func Loaded(ctx context.Context, cat catalog.Catalog, name string, tbl *table.Table) (*Table, error) {
	t := Unplanned(cat, name, tbl)
	if tbl.CurrentSnapshot() == nil {
		return t, nil
	}
	var err error
	if t.All, err = catalogs.PlanFiles(ctx, tbl.Scan(table.WithSnapshotID(t.SnapshotID))); err != nil {
		return nil, fmt.Errorf("plan files of %s: %w", name, err)
	}
	return t, nil
}

// LoadAt loads the table called name in cat and the live files of its
// snapshot snapshotID (with their delete files).
func LoadAt(ctx context.Context, cat catalog.Catalog, name string, snapshotID int64) (*Table, error) {
	cat = catalogs.Wrap(cat)
	tbl, err := catalogs.LoadTable(ctx, cat, name)
	if err != nil {
		return nil, err
	}
	t := &Table{Catalog: cat, Name: name, Table: tbl, SnapshotID: snapshotID}
	if t.All, err = catalogs.PlanFiles(ctx, tbl.Scan(table.WithSnapshotID(snapshotID))); err != nil {
		return nil, fmt.Errorf("plan files of %s at snapshot %d: %w", name, snapshotID, err)
	}
	return t, nil
}

// Describe is t as a rewrite plans on it.
func (t *Table) Describe() format.Table {
	d := Describe(t.Table)
	d.Format, d.Name, d.Version = t, t.Name, t.SnapshotID
	d.Files = PlanFiles(t.Table, t.All)
	if t.Table.CurrentSnapshot() == nil {
		d.Empty = "the table has no snapshot yet: there is no data to rewrite"
	}
	d.Scope = func(w string) (format.Scoper, error) { return t.scope(w) }
	return d
}

// Describe is what choosing and checking a layout needs of tbl: its
// name, columns, Arrow schema, geometry column and recorded layout. It
// has no files and no Format.
func Describe(tbl *table.Table) format.Table {
	d := format.Table{Name: catalogs.TableName(tbl), Properties: tbl.Properties(), Columns: topLevelColumns(tbl.Schema()),
		Layout: func() (layouts.Record, error) { return Layout(tbl) }}
	d.Schema, _ = table.SchemaToArrowSchema(tbl.Schema(), nil, false, false) // unknown when it cannot be built
	if cols, err := discoverColumns(tbl); err == nil {
		d.Geometry = cols.Geometry
	}
	return d
}

// scope parses text into the selection of the files that may hold
// matching rows: an Iceberg scan with the predicate as its row filter.
// Whole files are selected (tasks from a filtered scan would drop the
// non-matching rows of the files they select), as Iceberg does.
func (t *Table) scope(text string) (format.Scoper, error) {
	filter, err := where.Parse(text, t.Table.Schema())
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, files []format.PlanFile) ([]format.PlanFile, error) {
		if _, ok := filter.(iceberg.AlwaysTrue); ok {
			return files, nil
		}
		scoped, err := catalogs.PlanFiles(ctx, t.Table.Scan(table.WithSnapshotID(t.SnapshotID), table.WithRowFilter(filter)))
		if err != nil {
			return nil, fmt.Errorf("plan files of %s for the where predicate: %w", t.Name, err)
		}
		keep := make(map[string]bool, len(scoped))
		for _, s := range scoped {
			keep[s.File.FilePath()] = true
		}
		return slices.DeleteFunc(slices.Clone(files), func(f format.PlanFile) bool { return !keep[f.Path] }), nil
	}, nil
}

func topLevelColumns(sc *iceberg.Schema) []string {
	names := make([]string, 0, sc.NumFields())
	for _, f := range sc.Fields() {
		names = append(names, f.Name)
	}
	return names
}

// Layout returns the layout tbl records: layouts.Prop when set, else its
// Iceberg sort order when that is a plain column order (a sort by a
// transform such as bucket or day cannot be evaluated by a rewrite and
// counts as none). A layouts.Prop value that does not parse is an error
// naming the property and the fix.
func Layout(tbl *table.Table) (layouts.Record, error) {
	if l, ok, err := layouts.FromProperties(catalogs.TableName(tbl), tbl.Properties()); ok || err != nil {
		return l, err
	}
	if o, ok := SortOrder(tbl); ok {
		return layouts.Record{Text: o.String(), Source: layouts.FromSortOrder}, nil
	}
	return layouts.Record{}, nil
}

// SortOrder converts the table's Iceberg sort order into a linear order,
// or reports false when the table is unsorted or sorts by a transform
// (bucket, day, ...) that a rewrite cannot evaluate.
func SortOrder(tbl *table.Table) (cluster.Order, bool) {
	so := tbl.SortOrder()
	if so.IsUnsorted() {
		return cluster.Order{}, false
	}
	o := cluster.Order{Curve: cluster.CurveLinear}
	for _, f := range so.Fields() {
		if f.Transform.String() != "identity" {
			return cluster.Order{}, false
		}
		name, ok := tbl.Schema().FindColumnName(f.SourceID())
		if !ok {
			return cluster.Order{}, false
		}
		field := cluster.Field{Column: name, Direction: cluster.Asc, Nulls: cluster.NullsFirst}
		if f.Direction == table.SortDESC {
			field.Direction = cluster.Desc
		}
		if f.NullOrder == table.NullsLast {
			field.Nulls = cluster.NullsLast
		}
		o.Fields = append(o.Fields, field)
	}
	return o, len(o.Fields) > 0
}
