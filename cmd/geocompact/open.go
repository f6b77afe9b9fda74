package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/deltatable"
	"github.com/geocompact/geocompact/table/icebergtable"
)

// tableFlags are a command's --table and --delta flags: the one place a
// command learns which table it acts on, and so its format.
type tableFlags struct {
	name, location string
}

// register adds --table (with tableUsage) and --delta (with deltaUsage,
// which the location's forms are appended to) to f.
func (t *tableFlags) register(f *pflag.FlagSet, tableUsage, deltaUsage string) {
	f.StringVar(&t.name, "table", "", tableUsage)
	f.StringVar(&t.location, "delta", "", deltaUsage+": a directory, file: URL or s3://BUCKET/PREFIX")
}

// ref is the table the flags name; the command's flag rules make sure
// exactly one is given.
func (t tableFlags) ref() table.Ref { return table.Ref{Name: t.name, Location: t.location} }

// flag is the flag that names the table again on a command line, its
// value quoted for a shell.
func (t tableFlags) flag() string {
	if t.location != "" {
		return "--delta " + shellQuote(t.location)
	}
	return "--table " + shellQuote(t.name)
}

// set reports whether either flag names a table.
func (t tableFlags) set() bool { return t.name != "" || t.location != "" }

// openedTable is a table a command opened, described as every stage takes
// it, with what the command needs besides.
type openedTable struct {
	table.Table
	// Retries is the catalog's budget for commits that lose a race (0 for
	// a Delta table, whose commits retry on their own).
	Retries int
	// Close releases the catalog the table was loaded from.
	Close func()
}

// openTable opens the table ref names at its latest version: the one
// opener of every command that acts on an Iceberg or a Delta table. A
// command that only reads passes write false: nothing is created (an
// embedded warehouse without a catalog is reported, not initialised) and
// a Delta table is not refused for a protocol geocompact cannot write.
// With write true such a Delta table is refused here, before anything is
// written.
func (g *globalOptions) openTable(ctx context.Context, ref table.Ref, write bool) (*openedTable, error) {
	if ref.IsDelta() {
		dt, err := openDelta(ctx, ref.Location)
		if err != nil {
			return nil, err
		}
		t, err := deltatable.Open(ctx, dt, ref.Location, !write)
		if err != nil {
			return nil, err
		}
		return &openedTable{Table: t, Close: func() {}}, nil
	}
	if !write {
		tbl, cat, done, err := loadTableForRead(ctx, g, ref.Name)
		if err != nil {
			return nil, err
		}
		it, err := icebergtable.Loaded(ctx, cat, ref.Name, tbl)
		if err != nil {
			done()
			return nil, err
		}
		return &openedTable{Table: it.Describe(), Close: done}, nil
	}
	cat, spec, err := g.openCatalog(ctx)
	if err != nil {
		return nil, err
	}
	closeCat := func() {
		if c, ok := cat.(io.Closer); ok {
			_ = c.Close()
		}
	}
	t, err := icebergtable.Open(ctx, cat, ref.Name)
	if err != nil {
		closeCat()
		return nil, err
	}
	return &openedTable{Table: t, Retries: spec.Retries(), Close: closeCat}, nil
}

// openDelta opens the Delta table at location for a read-only command,
// refusing a location that holds no Delta log.
func openDelta(ctx context.Context, location string) (*delta.Table, error) {
	tbl, err := delta.Open(ctx, location)
	if err != nil {
		return nil, fmt.Errorf("open Delta table %s: %w", location, err)
	}
	files, err := tbl.Store.List(ctx, delta.LogDir, false)
	switch {
	case err != nil:
		return nil, fmt.Errorf("open Delta table %s: %w", location, err)
	case len(files) == 0:
		return nil, fmt.Errorf("open Delta table %s: %w: give the table's root directory, the one holding %s", location, delta.ErrNotATable, delta.LogDir)
	}
	return tbl, nil
}
