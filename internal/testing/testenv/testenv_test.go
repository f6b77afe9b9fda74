package testenv_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/geocompact/geocompact/internal/testing/testenv"
	"github.com/geocompact/geocompact/table/config"
)

// TestCatalogsAreIsolated creates the same namespace in two fresh catalogs
// of each backend: neither sees the other's.
func TestCatalogsAreIsolated(t *testing.T) {
	for _, c := range testenv.Catalogs(t) {
		t.Run(c.Backend, func(t *testing.T) {
			a, specA := c.Open(t)
			b, specB := c.Open(t)
			if specA.Name == specB.Name && specA.Warehouse == specB.Warehouse {
				t.Fatalf("two specs share name %q and warehouse %q", specA.Name, specA.Warehouse)
			}
			ns := table.Identifier{"iso"}
			if err := a.CreateNamespace(t.Context(), ns, nil); err != nil {
				t.Fatal(err)
			}
			if ok, err := b.CheckNamespaceExists(t.Context(), ns); err != nil || ok {
				t.Fatalf("second catalog sees the first's namespace: exists=%v err=%v", ok, err)
			}
			if ok, err := a.CheckNamespaceExists(t.Context(), ns); err != nil || !ok {
				t.Fatalf("namespace missing from its own catalog: exists=%v err=%v", ok, err)
			}
		})
	}
}

// TestGlobalFlags checks that the flags written for a spec open the same
// catalog through the config file.
func TestGlobalFlags(t *testing.T) {
	for _, c := range testenv.Catalogs(t) {
		t.Run(c.Backend, func(t *testing.T) {
			cat, spec := c.Open(t)
			if err := cat.CreateNamespace(t.Context(), table.Identifier{"flags"}, nil); err != nil {
				t.Fatal(err)
			}
			flags := testenv.GlobalFlags(t, spec)
			var cfgPath, name, warehouse string
			for i := 0; i+1 < len(flags); i += 2 {
				switch flags[i] {
				case "--config":
					cfgPath = flags[i+1]
				case "--catalog":
					name = flags[i+1]
				case "--warehouse":
					warehouse = flags[i+1]
				}
			}
			cfg, err := config.Load(cfgPath)
			if cfgPath == "" {
				cfg, err = &config.File{}, nil
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := cfg.Catalog(name, warehouse)
			if err != nil {
				t.Fatal(err)
			}
			cat2 := testenv.OpenSpec(t, got)
			ok, err := cat2.CheckNamespaceExists(t.Context(), table.Identifier{"flags"})
			if err != nil || !ok {
				t.Fatalf("catalog from flags %v does not see the namespace: exists=%v err=%v", flags, ok, err)
			}
		})
	}
}

func TestPostgresURIUnset(t *testing.T) {
	t.Setenv(testenv.PostgresURIEnv, "")
	t.Setenv("CI", "")
	var skipped bool
	ft := &fakeTB{TB: t, skip: func() { skipped = true }}
	testenv.PostgresURI(ft)
	if !skipped || !strings.Contains(ft.msg, testenv.PostgresURIEnv) {
		t.Fatalf("locally: skipped=%v message %q; want a skip naming %s", skipped, ft.msg, testenv.PostgresURIEnv)
	}
	t.Setenv("CI", "true")
	var failed bool
	ft = &fakeTB{TB: t, fail: func() { failed = true }}
	testenv.PostgresURI(ft)
	if !failed || !strings.Contains(ft.msg, "not started") {
		t.Fatalf("in CI: failed=%v message %q; want a failure saying the server was not started", failed, ft.msg)
	}
}

// fakeTB records Skipf and Fatalf instead of ending the test.
type fakeTB struct {
	testing.TB
	msg        string
	skip, fail func()
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Skipf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	f.skip()
}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	f.fail()
}

// TestDeltaGolden checks that the golden tables are found beside the
// repository, and that a missing folder skips locally, naming the folder,
// and fails in CI.
func TestDeltaGolden(t *testing.T) {
	t.Setenv(testenv.DeltaGoldenEnv, "")
	t.Setenv("CI", "")
	var ended bool
	ft := &fakeTB{TB: t, skip: func() { ended = true }, fail: func() { ended = true }}
	dir := testenv.DeltaGolden(ft)
	if !ended {
		if _, err := os.Stat(filepath.Join(dir, "basic-with-inserts-deletes-checkpoint")); err != nil {
			t.Fatalf("DeltaGolden returned %s, which holds no golden table: %v", dir, err)
		}
	}

	missing := filepath.Join(t.TempDir(), "no-golden")
	t.Setenv(testenv.DeltaGoldenEnv, missing)
	var skipped bool
	ft = &fakeTB{TB: t, skip: func() { skipped = true }, fail: func() { t.Fatal("failed outside CI") }}
	testenv.DeltaGolden(ft)
	if !skipped || !strings.Contains(ft.msg, missing) || !strings.Contains(ft.msg, testenv.DeltaGoldenEnv) {
		t.Fatalf("locally: skipped=%v message %q; want a skip naming %s and %s", skipped, ft.msg, missing, testenv.DeltaGoldenEnv)
	}
	t.Setenv("CI", "true")
	var failed bool
	ft = &fakeTB{TB: t, skip: func() { t.Fatal("skipped in CI") }, fail: func() { failed = true }}
	testenv.DeltaGolden(ft)
	if !failed || !strings.Contains(ft.msg, missing) {
		t.Fatalf("in CI: failed=%v message %q; want a failure naming %s", failed, ft.msg, missing)
	}
}
