// Package catalogs opens Iceberg catalogs (the embedded SQLite catalog
// under a warehouse directory, or a configured sql, rest, glue, hive or
// hadoop catalog), names and loads their tables with errors that say what
// to do, plans their files whole, and retries commits that lost a race
// with another writer. Every
// package that reaches a table goes through it; it knows nothing of
// rewrites. (It is not iceberg-go's catalog package, which it wraps.)
package catalogs

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	// Catalog implementations, registered with catalog.Load by their init.
	// glue and hive come with the build tags glue and hive (see
	// catalogs_*.go).
	_ "github.com/apache/iceberg-go/catalog/hadoop"
	_ "github.com/apache/iceberg-go/catalog/rest"
	_ "github.com/apache/iceberg-go/catalog/sql"

	// The object store for s3:// warehouses. gs:// and abfs:// come with
	// the build tags gcs and azure (see stores_*.go): their SDKs would
	// otherwise add some 360 packages to every build.
	_ "github.com/apache/iceberg-go/io/gocloud/s3"

	// database/sql drivers: "sqlite" (pure Go) and "pgx" (PostgreSQL).
	_ "github.com/jackc/pgx/v5/stdlib"
	_ "github.com/uptrace/bun/driver/sqliteshim"

	"github.com/geocompact/geocompact/internal/suggest"
)

// Sentinel errors for catalog access. They are matched with errors.Is and
// decide the CLI's exit code.
var (
	// ErrUnknown is returned when a catalog name is not in the config file.
	ErrUnknown = errors.New("engine: unknown catalog")
	// ErrBadIdentifier is returned for a table name that is not NS.T.
	ErrBadIdentifier = errors.New("engine: bad table identifier")
)

// DefaultWarehouse is the embedded warehouse directory used when neither
// --warehouse nor GEOCOMPACT_WAREHOUSE is given.
const DefaultWarehouse = "./warehouse"

// EmbeddedName is the name the embedded SQLite catalog records on
// every table row.
const EmbeddedName = "geocompact"

// Spec says how to reach one catalog. The zero value with Warehouse
// set is the embedded default: iceberg-go's SQL catalog on a SQLite file
// <Warehouse>/catalog.db, created on first use.
type Spec struct {
	// Name is the catalog's name as recorded in the catalog (and in the
	// config file). Empty means EmbeddedName.
	Name string
	// Type is sql, rest, glue, hive or hadoop. Empty means the embedded
	// SQLite catalog under Warehouse.
	Type string
	// Warehouse is a directory path or a file:// or s3:// URI.
	Warehouse string
	// Props are passed to the catalog as they are (uri, sql.dialect,
	// s3.endpoint, credential, ...).
	Props map[string]string
	// CommitRetries is how many times a commit that lost a race with
	// another writer is retried on a fresh base. Zero means 4; negative
	// means none.
	CommitRetries int
}

// Retries returns the commit retry budget the spec asks for.
func (s Spec) Retries() int {
	switch {
	case s.CommitRetries < 0:
		return 0
	case s.CommitRetries == 0:
		return 4
	}
	return s.CommitRetries
}

// Open opens the catalog spec describes. The embedded SQLite catalog
// creates its warehouse directory and database on first use. The returned
// catalog reports stale-base commit failures of the sql and hadoop catalogs
// as table.ErrCommitFailed, so they can be retried.
func Open(ctx context.Context, spec Spec) (catalog.Catalog, error) {
	useTrackedLocalIO()
	registerMissingStores()
	props := iceberg.Properties{}
	for k, v := range spec.Props {
		props[k] = v
	}
	name := spec.Name
	if name == "" {
		name = EmbeddedName
	}
	typ := strings.ToLower(spec.Type)
	if typ == "" {
		dir, err := localWarehouse(spec.Warehouse)
		if err != nil {
			return nil, err
		}
		typ = "sql"
		props["uri"] = sqliteURI(filepath.Join(dir, "catalog.db"))
		props["sql.driver"] = "sqlite"
		props["sql.dialect"] = "sqlite"
		props["warehouse"] = dirURI(dir)
	} else if spec.Warehouse != "" {
		wh, err := warehouseURI(spec.Warehouse)
		if err != nil {
			return nil, err
		}
		props["warehouse"] = wh
	}
	if typ == "sql" {
		if props["sql.dialect"] == "" {
			props["sql.dialect"] = "sqlite"
		}
		if props["sql.driver"] == "" {
			props["sql.driver"] = map[string]string{"postgres": "pgx", "sqlite": "sqlite"}[props["sql.dialect"]]
		}
	}
	if typ == "hadoop" {
		wh := props["warehouse"]
		if wh == "" {
			return nil, fmt.Errorf("open catalog %q: a hadoop catalog needs a warehouse", name)
		}
		if !strings.HasPrefix(wh, "file://") && !strings.HasPrefix(wh, "/") {
			// iceberg-go refuses non-local hadoop warehouses unless told
			// that commits are unsafe; the user configured it, say so.
			props["allow-unsafe-commits"] = props.Get("allow-unsafe-commits", "false")
		}
	}
	if slices.Contains(missingCatalogs, typ) {
		return nil, fmt.Errorf("open %s catalog %q: %s catalogs are not in this build of geocompact; build it with -tags %s "+
			"(go install -tags %s github.com/geocompact/geocompact/cmd/geocompact@latest)", typ, name, typ, typ, typ)
	}
	props["type"] = typ
	cat, err := catalog.Load(ctx, name, props)
	if err != nil {
		return nil, fmt.Errorf("open %s catalog %q: %s", typ, name, redact(err.Error(), props))
	}
	return Wrap(cat), nil
}

// localWarehouse resolves a warehouse path for the embedded catalog and
// creates it. Only local directories are supported there: an object-store
// warehouse needs a catalog from the config file.
func localWarehouse(wh string) (string, error) {
	if wh == "" {
		wh = DefaultWarehouse
	}
	if strings.Contains(wh, "://") {
		u, err := url.Parse(wh)
		if err != nil || u.Scheme != "file" {
			return "", fmt.Errorf("warehouse %q: the embedded catalog needs a local directory; configure a catalog for object stores", wh)
		}
		wh = u.Path
	}
	dir, err := filepath.Abs(wh)
	if err != nil {
		return "", fmt.Errorf("warehouse %q: %w", wh, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create warehouse: %w", err)
	}
	return dir, nil
}

// sqliteURI is the SQLite URI of the database file db (an absolute path),
// with its busy timeout and WAL journal. The path is percent-escaped, so
// that "?", "#" and "%" in it stay part of the file name: SQLite would read
// them as the start of the query, the fragment or an escape, and open a
// database elsewhere.
func sqliteURI(db string) string {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(db), RawQuery: "_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)"}
	if !strings.HasPrefix(u.Path, "/") {
		u.Path = "/" + u.Path // a Windows drive: file:///C:/...
	}
	return u.String()
}

// dirURI is the file:// URI of the absolute directory dir. A path that
// reads back as itself keeps its plain spelling, as earlier versions wrote
// it into table locations; any other ("?", "#", "%" in it) is
// percent-escaped, which iceberg-go decodes when it opens files.
func dirURI(dir string) string {
	slashed := filepath.ToSlash(dir)
	if !strings.HasPrefix(slashed, "/") {
		slashed = "/" + slashed
	}
	plain := "file://" + slashed
	if u, err := url.Parse(plain); err == nil && u.Path == slashed && u.RawQuery == "" && u.Fragment == "" && u.Host == "" {
		return plain
	}
	return (&url.URL{Scheme: "file", Path: slashed}).String()
}

// warehouseURI turns a bare directory into a file:// URI and leaves URIs as
// they are.
func warehouseURI(wh string) (string, error) {
	if strings.Contains(wh, "://") {
		return wh, nil
	}
	dir, err := filepath.Abs(wh)
	if err != nil {
		return "", fmt.Errorf("warehouse %q: %w", wh, err)
	}
	return dirURI(dir), nil
}

// ParseIdentifier splits "ns.table" (or "a.b.table" for nested namespaces)
// into an Iceberg identifier.
func ParseIdentifier(s string) (table.Identifier, error) {
	parts := strings.Split(s, ".")
	if len(parts) < 2 {
		return nil, fmt.Errorf("%w: %q, want NAMESPACE.TABLE", ErrBadIdentifier, s)
	}
	for _, p := range parts {
		if p == "" {
			return nil, fmt.Errorf("%w: %q has an empty part", ErrBadIdentifier, s)
		}
	}
	return parts, nil
}

// TableName is tbl's identifier as ParseIdentifier reads it ("ns.t").
func TableName(tbl *table.Table) string {
	return strings.Join(tbl.Identifier(), ".")
}

// LoadTable loads the table named ident ("ns.t"), with an error that names
// it when it does not exist.
func LoadTable(ctx context.Context, cat catalog.Catalog, name string) (*table.Table, error) {
	ident, err := ParseIdentifier(name)
	if err != nil {
		return nil, err
	}
	tbl, err := cat.LoadTable(ctx, ident)
	if errors.Is(err, catalog.ErrNoSuchTable) {
		return nil, &missingTableError{msg: "table " + name + " does not exist" + TableHint(ctx, cat, name), err: err}
	}
	if err != nil {
		return nil, fmt.Errorf("load table %s: %w", name, err)
	}
	return tbl, nil
}

// secretKeys are property names whose values never appear in messages.
var secretKeys = []string{"secret", "password", "token", "credential", "key-id"}

// redact removes the values of secret-looking properties (and any password
// in a URI) from msg.
func redact(msg string, props iceberg.Properties) string {
	for k, v := range props {
		if v == "" || len(v) < 4 {
			continue
		}
		lk := strings.ToLower(k)
		for _, s := range secretKeys {
			if strings.Contains(lk, s) {
				msg = strings.ReplaceAll(msg, v, "****")
			}
		}
		if u, err := url.Parse(v); err == nil && u.User != nil {
			if p, ok := u.User.Password(); ok && p != "" {
				msg = strings.ReplaceAll(msg, p, "****")
			}
		}
	}
	return msg
}

// missingTableError is a table that does not exist, with a hint; it
// unwraps to the catalog's error (catalog.ErrNoSuchTable).
type missingTableError struct {
	msg string
	err error
}

func (e *missingTableError) Error() string { return e.msg }
func (e *missingTableError) Unwrap() error { return e.err }

// TableHint returns "; did you mean NS.T?" naming the catalog's table
// closest to name, a misspelling of it, or a pointer to `geocompact
// tables` when none is close. It lists the catalog, so call it only once
// a table was not found; a catalog that cannot be listed gives the
// pointer.
func TableHint(ctx context.Context, cat catalog.Catalog, name string) string {
	const list = " (run geocompact tables to list the catalog's tables)"
	names, err := tableNames(ctx, cat)
	if err != nil {
		return list
	}
	if hint := suggest.Hint(name, names); hint != "" {
		return hint
	}
	return list
}

// tableNames lists every table of the catalog's top-level namespaces as
// NS.T.
func tableNames(ctx context.Context, cat catalog.Catalog) ([]string, error) {
	nss, err := cat.ListNamespaces(ctx, nil)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, ns := range nss {
		for id, err := range cat.ListTables(ctx, ns) {
			if err != nil {
				return nil, err
			}
			names = append(names, strings.Join(id, "."))
		}
	}
	return names, nil
}
