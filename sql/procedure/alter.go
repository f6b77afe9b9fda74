package procedure

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/iceberg-go/catalog"

	"github.com/geocompact/geocompact/alter"
	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/sql"
	"github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/table/deltatable"
	"github.com/geocompact/geocompact/table/icebergtable"
)

// Result columns of ALTER TABLE: the layout the table records afterwards
// ("none (binpack)" for none), where ("-" for none), and the Iceberg sort
// order ("unsorted" for none; on a Delta table, the version the change
// was committed as). Spark's ALTER TABLE returns no rows; these say
// what was recorded, as geocompact alter prints it.
var (
	alterColumns      = []string{"layout", "recorded_in", "sort_order"}
	alterDeltaColumns = []string{"layout", "recorded_in", "version"}
)

// alterRequest is the request an ALTER TABLE statement makes of
// alter, the alter command's own code.
func alterRequest(a *sql.Alter) alter.Request {
	return alter.Request{SortOrder: a.SortOrder, Unsorted: a.Unordered, Set: a.Set, Unset: a.Unset}
}

// prepareAlter resolves the table of an ALTER TABLE statement and checks
// the change against it as alter does, committing nothing.
func (s *Script) prepareAlter(ctx context.Context, st sql.Statement, cats Catalogs) (*step, error) {
	a := st.Alter
	req := alterRequest(a)
	if a.Location != "" {
		if err := validateAlter(ctx, a, nil, "", req); err != nil {
			return nil, fmt.Errorf("ALTER TABLE %s: %w", a.Location, err)
		}
		return &step{call: sql.Call{Statement: st}}, nil
	}
	call := sql.Call{Statement: st, Table: a.TableName()}
	if len(a.Table) > 2 && cats.Has(a.Table[0]) {
		call.Catalog, call.Table = a.Table[0], strings.Join(a.Table[1:], ".")
	}
	stp, err := s.resolve(ctx, call, cats)
	if err != nil {
		return nil, err
	}
	if err := validateAlter(ctx, a, stp.cat, call.Table, req); err != nil {
		return nil, fmt.Errorf("ALTER TABLE %s: %w", call.Table, err)
	}
	return stp, nil
}

// runAlter runs an ALTER TABLE statement through alter. UNSET
// TBLPROPERTIES without IF EXISTS first checks that the table holds every
// key, as Spark does; the check runs here, not when the script is
// prepared, so that an earlier statement may set the key.
func (s *Script) runAlter(ctx context.Context, st *step, res *Result) error {
	a := st.call.Statement.Alter
	if s.opts.DryRun {
		res.DryRun, res.Skipped = true, "ALTER TABLE has no dry run; it was checked, not run"
		return nil
	}
	req := alterRequest(a)
	props, err := s.alterProperties(ctx, st)
	if err != nil {
		return err
	}
	if err := checkUnset(a, props); err != nil {
		return err
	}
	t, err := alterTable(ctx, a, st.cat, st.call.Table)
	var out *alter.Result
	if err == nil {
		out, err = alter.Apply(ctx, t, req)
	}
	if err != nil {
		return fmt.Errorf("ALTER TABLE %s: %w", a.TableName(), err)
	}
	res.Detail = out
	layout, source := cmp.Or(out.Layout.Text, "none (binpack)"), cmp.Or(out.Layout.Source, "-")
	if out.Version != nil {
		res.add(layout, source, *out.Version)
	} else {
		res.add(layout, source, cmp.Or(out.SortOrder, "unsorted"))
	}
	return nil
}

// alterTable opens the table an ALTER TABLE statement alters: the Delta
// table at its location, else the table called name in cat.
func alterTable(ctx context.Context, a *sql.Alter, cat catalog.Catalog, name string) (table.Table, error) {
	if a.Location != "" {
		// delta.Table.SetProperties refuses a table it cannot write.
		return deltatable.OpenLocation(ctx, a.Location, table.ForRead)
	}
	return icebergtable.Open(ctx, cat, name)
}

// validateAlter checks req against the table an ALTER TABLE statement
// alters, committing nothing.
func validateAlter(ctx context.Context, a *sql.Alter, cat catalog.Catalog, name string, req alter.Request) error {
	t, err := alterTable(ctx, a, cat, name)
	if err != nil {
		return err
	}
	return alter.Validate(ctx, t, req)
}

// alterProperties returns the table's properties when the statement
// unsets keys without IF EXISTS; nil otherwise.
func (s *Script) alterProperties(ctx context.Context, st *step) (map[string]string, error) {
	a := st.call.Statement.Alter
	if len(a.Unset) == 0 || a.IfExists {
		return nil, nil
	}
	if a.Location != "" {
		t, err := delta.Open(ctx, a.Location)
		if err != nil {
			return nil, fmt.Errorf("open Delta table %s: %w", a.Location, err)
		}
		snap, err := t.Snapshot(ctx)
		if err != nil {
			return nil, fmt.Errorf("ALTER TABLE %s: %w", a.Location, err)
		}
		return snap.Metadata.Configuration, nil
	}
	tbl, err := catalogs.LoadTable(ctx, st.cat, st.call.Table)
	if err != nil {
		return nil, err
	}
	return tbl.Properties(), nil
}

// checkUnset refuses UNSET TBLPROPERTIES of keys the table does not hold
// (props nil means IF EXISTS, or nothing to unset).
func checkUnset(a *sql.Alter, props map[string]string) error {
	if props == nil && (len(a.Unset) == 0 || a.IfExists) {
		return nil
	}
	var missing []string
	for _, k := range a.Unset {
		if _, ok := props[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	slices.Sort(missing)
	return fmt.Errorf("%w: ALTER TABLE %s UNSET TBLPROPERTIES: the table has no property %s; write UNSET TBLPROPERTIES IF EXISTS to ignore missing keys",
		ErrCall, a.TableName(), strings.Join(missing, ", "))
}
