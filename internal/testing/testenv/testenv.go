// Package testenv gives geocompact's tests the catalogs they run against: an
// embedded SQLite catalog in a temporary warehouse, always, and iceberg-go's
// SQL catalog on PostgreSQL when a server is configured.
//
// The PostgreSQL server is named by the environment variable
// GEOCOMPACT_TEST_POSTGRES_URI (see PostgresURIEnv), for example
//
//	eval "$(scripts/start-postgres.sh)"   # starts one on 127.0.0.1:55432
//	go test ./...
//
// When the variable is unset, PostgreSQL tests skip with a message saying
// so; in CI (CI=true) they fail instead, because a CI run without the
// server has not tested what it claims to.
//
// Integration tests run once per catalog, each in its own subtest:
//
//	for _, c := range testenv.Catalogs(t) {
//		t.Run(c.Backend, func(t *testing.T) {
//			cat, spec := c.Open(t) // skips (or fails in CI) when c is unavailable
//			...
//			r := runCLI(t, "", false, append(testenv.GlobalFlags(t, spec), "metrics", "--table", "demo.t")...)
//		})
//	}
//
// Every call to Spec or Open returns a fresh, isolated catalog: a new
// temporary warehouse and, on PostgreSQL, a catalog name of its own (the SQL
// catalog keys every row by catalog name), so tests and parallel packages
// never see each other's tables. PostgreSQL rows are deleted and the
// connection pool closed when the test ends.
//
// Because testenv imports engine, only external test packages
// (package engine_test) of engine can use it.
package testenv

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog"

	"github.com/geocompact/geocompact/table/catalogs"
)

// PostgresURIEnv is the environment variable holding the PostgreSQL URI the
// tests use, e.g. postgres://geocompact:geocompact@127.0.0.1:55432/geocompact?sslmode=disable.
const PostgresURIEnv = "GEOCOMPACT_TEST_POSTGRES_URI"

// Backends Catalogs returns, usable as subtest names.
const (
	// SQLite is the embedded catalog: iceberg-go's SQL catalog on a SQLite
	// file in the warehouse, as the CLI uses without a config file.
	SQLite = "sqlite"
	// Postgres is iceberg-go's SQL catalog on the server PostgresURIEnv
	// names.
	Postgres = "postgres"
)

// InCI reports whether the tests run in continuous integration (CI=true, as
// .ci/run and most CI systems set it), where missing services are failures.
func InCI() bool {
	ci, _ := strconv.ParseBool(os.Getenv("CI"))
	return ci
}

// SkipOrFail ends a test that cannot run here: it is skipped locally and
// failed when InCI, where a missing service, tool or command means the run
// would silently test less than it claims.
func SkipOrFail(t testing.TB, format string, args ...any) {
	t.Helper()
	if InCI() {
		t.Fatalf(format+" (CI=true: this must not be skipped)", args...)
		return
	}
	t.Skipf(format, args...)
}

// PostgresURI returns the PostgreSQL URI from PostgresURIEnv. When it is
// unset, the test is skipped, or failed when InCI.
func PostgresURI(t testing.TB) string {
	t.Helper()
	uri := os.Getenv(PostgresURIEnv)
	if uri != "" {
		return uri
	}
	SkipOrFail(t, "%s is not set: the PostgreSQL server was not started (run eval \"$(scripts/start-postgres.sh)\", as .ci/run does, to include these tests)", PostgresURIEnv)
	return ""
}

// Catalog is one kind of catalog integration tests run against.
type Catalog struct {
	// Backend is SQLite or Postgres.
	Backend string
}

// Catalogs returns the catalogs integration tests run against: SQLite and
// Postgres. Postgres is always listed so that, when no server is
// configured, its subtest reports the skip (or the CI failure) instead of
// silently vanishing.
func Catalogs(t testing.TB) []Catalog {
	t.Helper()
	return []Catalog{{Backend: SQLite}, {Backend: Postgres}}
}

// Spec returns the spec of a fresh, empty catalog of c's backend with its
// own temporary warehouse. For Postgres it skips or fails t as PostgresURI
// does when no server is configured, and deletes the catalog's rows when t
// ends.
func (c Catalog) Spec(t testing.TB) catalogs.Spec {
	t.Helper()
	switch c.Backend {
	case SQLite:
		return catalogs.Spec{Warehouse: t.TempDir()}
	case Postgres:
		uri := PostgresURI(t)
		preparePostgres(t, uri)
		name := catalogName(t)
		t.Cleanup(func() { dropPostgresCatalog(t, uri, name) })
		return catalogs.Spec{
			Name:      name,
			Type:      "sql",
			Warehouse: t.TempDir(),
			Props:     map[string]string{"uri": uri, "sql.dialect": "postgres"},
		}
	}
	t.Fatalf("testenv: unknown backend %q", c.Backend)
	return catalogs.Spec{}
}

// Open opens a fresh catalog of c's backend (see Spec) and closes it when t
// ends. It returns the spec too, for GlobalFlags.
func (c Catalog) Open(t testing.TB) (catalog.Catalog, catalogs.Spec) {
	t.Helper()
	spec := c.Spec(t)
	return OpenSpec(t, spec), spec
}

// OpenSpec opens the catalog spec describes and closes it when t ends.
func OpenSpec(t testing.TB, spec catalogs.Spec) catalog.Catalog {
	t.Helper()
	cat, err := catalogs.Open(t.Context(), spec)
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	t.Cleanup(func() {
		if cl, ok := cat.(io.Closer); ok {
			_ = cl.Close()
		}
	})
	return cat
}

// GlobalFlags returns the geocompact global flags that select the catalog
// spec describes: --warehouse for the embedded catalog, or --config with a
// config file written to a temporary directory and --catalog for any
// other. Appended after the flags a test harness sets, they take effect.
func GlobalFlags(t testing.TB, spec catalogs.Spec) []string {
	t.Helper()
	if spec.Type == "" {
		return []string{"--warehouse", spec.Warehouse}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "catalogs:\n  %s:\n    type: %s\n    warehouse: %q\n", spec.Name, spec.Type, spec.Warehouse)
	if len(spec.Props) > 0 {
		b.WriteString("    properties:\n")
		for k, v := range spec.Props {
			fmt.Fprintf(&b, "      %s: %q\n", k, v)
		}
	}
	path := filepath.Join(t.TempDir(), "geocompact.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"--config", path, "--catalog", spec.Name}
}

// catalogName is a catalog name unique to this test and run: the test's
// name, cut and cleaned, and random hex.
func catalogName(t testing.TB) string {
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, t.Name())
	if len(name) > 40 {
		name = name[:40]
	}
	return "t_" + name + "_" + hex.EncodeToString(rnd[:])
}

var (
	prepareMu sync.Mutex
	prepared  = map[string]bool{}
)

// advisoryLockKey serialises the creation of the SQL catalog's tables
// across test processes: PostgreSQL's CREATE TABLE IF NOT EXISTS is not
// safe against a concurrent twin.
const advisoryLockKey = 0x67656f63 // "geoc"

// preparePostgres makes sure the SQL catalog's tables exist on the server
// at uri, once per process, holding an advisory lock while iceberg-go
// creates them.
func preparePostgres(t testing.TB, uri string) {
	t.Helper()
	prepareMu.Lock()
	defer prepareMu.Unlock()
	if prepared[uri] {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, err := sql.Open("pgx", uri)
	if err != nil {
		t.Fatalf("testenv: open PostgreSQL at %s: %v", PostgresURIEnv, err)
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatalf("testenv: connect to PostgreSQL at %s: %v", PostgresURIEnv, err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", advisoryLockKey); err != nil {
		t.Fatalf("testenv: lock PostgreSQL: %v", err)
	}
	defer conn.ExecContext(ctx, "SELECT pg_advisory_unlock($1)", advisoryLockKey) //nolint:errcheck // the session ends right after
	cat, err := catalogs.Open(ctx, catalogs.Spec{
		Name: "testenv_init", Type: "sql", Warehouse: t.TempDir(),
		Props: map[string]string{"uri": uri, "sql.dialect": "postgres"},
	})
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	if cl, ok := cat.(io.Closer); ok {
		_ = cl.Close()
	}
	prepared[uri] = true
}

// dropPostgresCatalog deletes every row the SQL catalog holds for name.
// Data files live in the test's temporary warehouse and go with it.
func dropPostgresCatalog(t testing.TB, uri, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db, err := sql.Open("pgx", uri)
	if err != nil {
		t.Errorf("testenv: clean up catalog %s: %v", name, err)
		return
	}
	defer db.Close()
	for _, tbl := range []string{"iceberg_tables", "iceberg_namespace_properties"} {
		if _, err := db.ExecContext(ctx, "DELETE FROM "+tbl+" WHERE catalog_name = $1", name); err != nil {
			t.Errorf("testenv: clean up catalog %s: %v", name, err)
		}
	}
}
