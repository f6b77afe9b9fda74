package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestRewriteCLI(t *testing.T) {
	t.Parallel()
	wh := t.TempDir()
	if r := runCLI(t, wh, false, "generate", "--table", "geo.t", "--rows", "800", "--commits", "4"); r.Code != 0 {
		t.Fatalf("generate: %d %s", r.Code, r.Stderr)
	}

	t.Run("noop says why on stdout", func(t *testing.T) {
		r := runCLI(t, wh, false, "rewrite", "--table", "geo.t")
		if r.Code != exitOK {
			t.Fatalf("exit %d: %s", r.Code, r.Stderr)
		}
		for _, want := range []string{"nothing rewritten", "min-input-files=5", "--option min-input-files=4"} {
			if !strings.Contains(r.Stdout, want) {
				t.Fatalf("stdout lacks %q:\n%s", want, r.Stdout)
			}
		}
	})

	t.Run("unknown option is a usage error", func(t *testing.T) {
		r := runCLI(t, wh, false, "rewrite", "--table", "geo.t", "--option", "min-input=2")
		if r.Code != exitUsage || !strings.Contains(r.Stderr, `"min-input"`) || !strings.Contains(r.Stderr, "min-input-files") {
			t.Fatalf("exit %d, stderr %q", r.Code, r.Stderr)
		}
	})

	t.Run("malformed value names its option", func(t *testing.T) {
		r := runCLI(t, wh, false, "rewrite", "--table", "geo.t", "--option", "min-input-files=two")
		if r.Code != exitUsage || !strings.Contains(r.Stderr, "min-input-files") {
			t.Fatalf("exit %d, stderr %q", r.Code, r.Stderr)
		}
	})

	t.Run("dry run prints the plan", func(t *testing.T) {
		r := runCLI(t, wh, false, "rewrite", "--table", "geo.t", "--curve", "hilbert", "--option", "min-input-files=2", "--dry-run")
		if r.Code != exitOK || !strings.Contains(r.Stdout, "GROUP") || !strings.Contains(r.Stdout, "dry run") {
			t.Fatalf("exit %d:\n%s%s", r.Code, r.Stdout, r.Stderr)
		}
	})

	t.Run("json result has Iceberg's counters", func(t *testing.T) {
		r := runCLI(t, wh, false, "--json", "rewrite", "--table", "geo.t", "--curve", "hilbert", "--option", "min-input-files=2")
		if r.Code != exitOK {
			t.Fatalf("exit %d: %s", r.Code, r.Stderr)
		}
		var got map[string]any
		if err := json.Unmarshal([]byte(r.Stdout), &got); err != nil {
			t.Fatalf("stdout is not one JSON object: %v\n%s", err, r.Stdout)
		}
		for _, k := range []string{"rewritten_data_files_count", "added_data_files_count", "rewritten_bytes_count", "failed_data_files_count", "removed_delete_files_count"} {
			if _, ok := got[k]; !ok {
				t.Fatalf("JSON lacks %q: %s", k, r.Stdout)
			}
		}
		if got["rewritten_data_files_count"].(float64) != 4 || got["verified"] != true {
			t.Fatalf("result %s", r.Stdout)
		}
	})

	t.Run("missing table", func(t *testing.T) {
		r := runCLI(t, wh, false, "rewrite", "--table", "geo.nope")
		if r.Code != exitError || !strings.Contains(r.Stderr, "geo.nope") {
			t.Fatalf("exit %d, stderr %q", r.Code, r.Stderr)
		}
	})

	t.Run("sort without an order", func(t *testing.T) {
		r := runCLI(t, wh, false, "rewrite", "--table", "geo.t", "--strategy", "sort")
		if r.Code != exitUsage || !strings.Contains(r.Stderr, "no sort order") {
			t.Fatalf("exit %d, stderr %q", r.Code, r.Stderr)
		}
	})
}

func TestQuickstartCLI(t *testing.T) {
	t.Parallel()
	r := runCLI(t, "", false, "quickstart", "--rows", "20000", "--commits", "40", "--files", "8", "--windows", "5")
	if r.Code != exitOK {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	for _, want := range []string{"BEFORE", "AFTER", "files planned per bbox query", "verified"} {
		if !strings.Contains(r.Stdout, want) {
			t.Fatalf("stdout lacks %q:\n%s", want, r.Stdout)
		}
	}
}
