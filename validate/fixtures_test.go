package validate_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/geocompact/geocompact/validate"
	"github.com/geocompact/geocompact/validate/validatetest"
)

var update = flag.Bool("update", false, "rewrite the GeoParquet fixtures in ../testdata/geoparquet")

var fixtureDir = filepath.Join("..", "testdata", "geoparquet")

// TestWriteFixtures regenerates testdata/geoparquet with -update; without
// it, it checks every fixture is committed.
func TestWriteFixtures(t *testing.T) {
	if *update {
		validatetest.WriteFixtures(t, fixtureDir)
	}
	for _, fx := range validatetest.Fixtures() {
		if _, err := os.Stat(filepath.Join(fixtureDir, fx.Name+".parquet")); err != nil {
			t.Errorf("%v; run go test ./validate -run TestWriteFixtures -update", err)
		}
	}
}

func fixtureConfig() validate.Config {
	cfg := validate.DefaultConfig()
	cfg.CRS = "OGC:CRS84"
	cfg.MaxExamples = 100
	return cfg
}

// TestFixtures validates each committed fixture: ok-… files are clean,
// bad-<code>… files report <code>.
func TestFixtures(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(fixtureDir, "*.parquet"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures in %s (%v)", fixtureDir, err)
	}
	for _, p := range paths {
		name := strings.TrimSuffix(filepath.Base(p), ".parquet")
		t.Run(name, func(t *testing.T) {
			rep, err := validate.File(t.Context(), p, fixtureConfig())
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(name, "ok-") {
				if !rep.OK() {
					t.Fatalf("want clean, got %+v", rep)
				}
				return
			}
			code := strings.TrimPrefix(name, "bad-")
			if i := strings.IndexByte(code, '_'); i > 0 {
				code = code[:i]
			}
			if rep.Counts[code] == 0 || rep.OK() {
				t.Fatalf("want %s, got counts %v examples %+v", code, rep.Counts, rep.Examples)
			}
			for _, f := range rep.Examples {
				if f.Code == code && f.Detail == "" {
					t.Errorf("finding %+v has no detail", f)
				}
			}
		})
	}
}
