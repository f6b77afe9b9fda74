package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/iceberg-go/catalog"
	iceberg "github.com/apache/iceberg-go/table"
	"github.com/spf13/pflag"

	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/catalogs"
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

// tableAccess is what a command does with the table it opens: whether it
// reads the table's live files (an Iceberg table's are planned from its
// manifests) and whether it may change the table.
type tableAccess struct{ files, write bool }

// use is what a format opens the table for.
func (a tableAccess) use() table.Use {
	if a.write {
		return table.ForWrite
	}
	return table.ForRead
}

var (
	// toDescribe reads the table's metadata: schema, properties,
	// history, metadata tables. Nothing is created (an embedded
	// warehouse without a catalog is reported, not initialised) and a
	// broken manifest does not stop it.
	toDescribe = tableAccess{}
	// toRead reads its live files too.
	toRead = tableAccess{files: true}
	// toChange may commit to the table without reading its files (its
	// properties, its lease, its maintenance).
	toChange = tableAccess{write: true}
	// toRewrite reads its live files and may commit to it.
	toRewrite = tableAccess{files: true, write: true}
)

// unlessDryRun is a, read only when dryRun.
func (a tableAccess) unlessDryRun(dryRun bool) tableAccess {
	a.write = a.write && !dryRun
	return a
}

// openTable opens the table ref names at its latest version, for a: the
// one opener of every command that acts on an Iceberg or a Delta table.
// A Delta table geocompact cannot write (a protocol or feature it does
// not honour) is refused here when a.write, before anything is written,
// and is read otherwise.
func (g *globalOptions) openTable(ctx context.Context, ref table.Ref, a tableAccess) (*openedTable, error) {
	if ref.IsDelta() {
		dt, err := openDelta(ctx, ref.Location)
		if err != nil {
			return nil, err
		}
		t, err := deltatable.Open(ctx, dt, ref.Location, a.use())
		if err != nil {
			return nil, err
		}
		return &openedTable{Table: t, Close: func() {}}, nil
	}
	var (
		tbl      *iceberg.Table
		cat      catalog.Catalog
		closeCat func()
		retries  int
		err      error
	)
	if a.write {
		tbl, cat, closeCat, retries, err = g.loadTableForWrite(ctx, ref.Name)
	} else {
		tbl, cat, closeCat, err = loadTableForRead(ctx, g, ref.Name)
	}
	if err != nil {
		return nil, err
	}
	it := icebergtable.Unplanned(cat, ref.Name, tbl)
	if a.files {
		if it, err = icebergtable.Loaded(ctx, cat, ref.Name, tbl); err != nil {
			closeCat()
			return nil, err
		}
	}
	return &openedTable{Table: it.Describe(), Retries: retries, Close: closeCat}, nil
}

// loadTableForWrite opens the selected catalog, creating an embedded
// warehouse's, and loads name from it; it returns the catalog's budget
// for commits that lose a race, and done closes the catalog.
func (g *globalOptions) loadTableForWrite(ctx context.Context, name string) (*iceberg.Table, catalog.Catalog, func(), int, error) {
	cat, spec, err := g.openCatalog(ctx)
	if err != nil {
		return nil, nil, nil, 0, err
	}
	done := func() {
		if c, ok := cat.(io.Closer); ok {
			_ = c.Close()
		}
	}
	tbl, err := catalogs.LoadTable(ctx, cat, name)
	if err != nil {
		done()
		return nil, nil, nil, 0, err
	}
	return tbl, cat, done, spec.Retries(), nil
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

// loadTableForRead opens the selected catalog and loads name for a
// read-only command, with errors that name what is missing: the table or
// its namespace. It never creates anything: an embedded warehouse without a
// catalog is reported, not initialised. It returns the catalog the table
// was loaded from; done closes it.
func loadTableForRead(ctx context.Context, g *globalOptions, name string) (*iceberg.Table, catalog.Catalog, func(), error) {
	ident, err := catalogs.ParseIdentifier(name)
	if err != nil {
		return nil, nil, nil, usageErrorf("--table: %w", err)
	}
	spec, err := g.catalogSpec()
	if err != nil {
		return nil, nil, nil, err
	}
	if spec.Type == "" {
		dir := strings.TrimPrefix(spec.Warehouse, "file://")
		if dir == "" {
			dir = catalogs.DefaultWarehouse
		}
		if _, err := os.Stat(filepath.Join(dir, "catalog.db")); err != nil {
			return nil, nil, nil, fmt.Errorf("table %s does not exist: warehouse %s has no catalog yet", name, dir)
		}
	}
	cat, err := catalogs.Open(ctx, spec)
	if err != nil {
		return nil, nil, nil, err
	}
	cat = warnOutsideWarehouse(cat, spec, g.IO.ErrOut)
	done := func() {
		if c, ok := cat.(io.Closer); ok {
			_ = c.Close()
		}
	}
	catName := spec.Name
	if catName == "" {
		catName = catalogs.EmbeddedName
	}
	tbl, err := cat.LoadTable(ctx, ident)
	if err == nil {
		return tbl, cat, done, nil
	}
	defer done()
	if !errors.Is(err, catalog.ErrNoSuchTable) {
		return nil, nil, nil, fmt.Errorf("load table %s: %w", name, err)
	}
	ns := catalog.NamespaceFromIdent(ident)
	if ok, nsErr := cat.CheckNamespaceExists(ctx, ns); nsErr == nil && !ok {
		return nil, nil, nil, fmt.Errorf("table %s does not exist: catalog %q has no namespace %q", name, catName, strings.Join(ns, "."))
	}
	return nil, nil, nil, fmt.Errorf("table %s does not exist in catalog %q%s", name, catName, catalogs.TableHint(ctx, cat, name))
}

// openAppender is the table ref names as an ingest appends to it, which
// may not exist yet; it returns the catalog's budget for commits that
// lose a race (0 for a Delta table, whose commits retry on their own),
// and done closes the catalog.
func (g *globalOptions) openAppender(ctx context.Context, ref table.Ref) (table.Appender, int, func(), error) {
	if ref.IsDelta() {
		return deltatable.Appender(ref.Location), 0, func() {}, nil
	}
	cat, spec, err := g.openCatalog(ctx)
	if err != nil {
		return nil, 0, nil, err
	}
	done := func() {
		if c, ok := cat.(io.Closer); ok {
			_ = c.Close()
		}
	}
	return icebergtable.Appender(cat, ref.Name), spec.Retries(), done, nil
}
