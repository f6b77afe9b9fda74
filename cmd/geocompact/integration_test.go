package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/geocompact/geocompact/bench"
	"github.com/geocompact/geocompact/internal/testing/testenv"
	"github.com/geocompact/geocompact/maintain"
	"github.com/geocompact/geocompact/spatial"
)

// TestIntegrationCLI runs generate, inspect and metrics through the CLI on
// every test catalog: the embedded SQLite catalog, and PostgreSQL through a
// config file when configured.
func TestIntegrationCLI(t *testing.T) {
	for _, c := range testenv.Catalogs(t) {
		t.Run(c.Backend, func(t *testing.T) {
			spec := c.Spec(t)
			flags := testenv.GlobalFlags(t, spec)
			cli := func(t *testing.T, args ...string) cliResult {
				t.Helper()
				return runCLI(t, "", false, append(append([]string{}, flags...), args...)...)
			}
			for _, fv := range []string{"2", "3"} {
				t.Run("v"+fv, func(t *testing.T) {
					tbl := "cli.t" + fv
					r := cli(t, "--json", "generate", "--table", tbl, "--rows", "2000", "--commits", "10", "--format-version", fv, "--extent", "10,10,20,20")
					if r.Code != exitOK {
						t.Fatalf("generate: exit %d, stderr %q", r.Code, r.Stderr)
					}
					var gen bench.GenerateResult
					if err := json.Unmarshal([]byte(r.Stdout), &gen); err != nil {
						t.Fatalf("generate output: %v\n%s", err, r.Stdout)
					}

					r = cli(t, "--json", "inspect", "files", "--table", tbl)
					if r.Code != exitOK {
						t.Fatalf("inspect files: exit %d, stderr %q", r.Code, r.Stderr)
					}
					var files []struct {
						RecordCount int64          `json:"record_count"`
						BBox        *spatial.Bound `json:"bbox"`
					}
					if err := json.Unmarshal([]byte(r.Stdout), &files); err != nil {
						t.Fatal(err)
					}
					if len(files) != 10 {
						t.Errorf("%d files, want one per commit (10)", len(files))
					}
					union := spatial.EmptyBound()
					var records int64
					for i, f := range files {
						records += f.RecordCount
						if f.BBox == nil {
							t.Fatalf("file %d has no bbox", i)
						}
						union = union.Extend(*f.BBox)
					}
					if records != 2000 || union != gen.Extent {
						t.Errorf("files hold %d records in %v; generate wrote 2000 in %v", records, union, gen.Extent)
					}

					r = cli(t, "metrics", "--table", tbl, "--format", "json")
					if r.Code != exitOK {
						t.Fatalf("metrics: exit %d, stderr %q", r.Code, r.Stderr)
					}
					var m maintain.TableMetrics
					if err := json.Unmarshal([]byte(r.Stdout), &m); err != nil {
						t.Fatal(err)
					}
					if m.FileCount != 10 || m.TotalRecords != 2000 || m.SnapshotCount != 10 || m.TotalBytes != gen.Bytes {
						t.Errorf("metrics %+v; want 10 files, 2000 records, 10 snapshots, %d bytes", m, gen.Bytes)
					}

					r = cli(t, "metrics", "--table", tbl, "--format", "prometheus")
					want := fmt.Sprintf("geocompact_table_file_count{table=%q} 10\n", tbl)
					if r.Code != exitOK || !strings.Contains(r.Stdout, want) {
						t.Errorf("prometheus: exit %d, output lacks %q:\n%s", r.Code, want, r.Stdout)
					}
				})
			}
			t.Run("unknown table", func(t *testing.T) {
				r := cli(t, "inspect", "snapshots", "--table", "cli.nope")
				if r.Code != exitError || !strings.Contains(r.Stderr, "cli.nope") || r.Stdout != "" {
					t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 naming cli.nope", r.Code, r.Stdout, r.Stderr)
				}
			})
		})
	}
}
