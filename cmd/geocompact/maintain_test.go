package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/maintain"
	"github.com/geocompact/geocompact/table/catalogs"
)

func TestMaintainCLI(t *testing.T) {
	t.Parallel()
	wh := generated(t, 8)
	policy := filepath.Join(t.TempDir(), "policy.yaml")
	writeFile(t, policy, "gate:\n  min-avg-file-bytes: 1048576\nrewrite:\n  curve: hilbert\nexpire:\n  older-than: 1h\n  every: 0s\norphans:\n  older-than: 1h\n  every: 0s\n")

	r := runCLI(t, wh, false, "maintain", "--table", "geo.t", "--policy", policy)
	if r.Code != exitOK {
		t.Fatalf("exit %d:\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, want := range []string{"STEP", "gate       done", "min-avg-file-bytes fired", "rewrite    done", "verify     done", "expire     done", "orphans    done", "METRIC", "data files           8",
		"\nsnapshots ", "\noldest snapshot age "} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.Stdout)
		}
	}

	r = runCLI(t, wh, false, "--json", "maintain", "--table", "geo.t", "--policy", policy)
	if r.Code != exitOK {
		t.Fatalf("second run exit %d:\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	var rep maintain.Report
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("--json is not one report: %v\n%s", err, r.Stdout)
	}
	if rep.Gate.Compact || rep.Before.FileCount != 1 || rep.After == nil {
		t.Fatalf("second run: gate %+v, files %d; want a quiet gate on one file", rep.Gate, rep.Before.FileCount)
	}
	if !strings.Contains(r.Stdout, `"snapshot_count"`) || strings.Contains(r.Stdout, "version_count") || strings.Contains(r.Stdout, `"format"`) {
		t.Errorf("an Iceberg report counts snapshots, without a format:\n%s", r.Stdout)
	}
}

func TestMaintainCLILeaseHeld(t *testing.T) {
	t.Parallel()
	wh := generated(t, 3)
	cat, err := catalogs.Open(t.Context(), catalogs.Spec{Warehouse: wh})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := maintain.AcquireLease(t.Context(), cat, "geo.t", "nightly-run@host1", time.Hour); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, wh, false, "maintain", "--table", "geo.t")
	if r.Code != exitConflict {
		t.Fatalf("exit %d, want %d; stderr %q", r.Code, exitConflict, r.Stderr)
	}
	for _, want := range []string{"nightly-run@host1", "until", "retry"} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("stderr %q lacks %q", r.Stderr, want)
		}
	}
}

func TestMaintainCLIBadPolicy(t *testing.T) {
	t.Parallel()
	wh := generated(t, 3)
	tests := []struct {
		name, doc, want string
	}{
		{"unknown field", "gate:\n  min-avg-file-size: 10\n", "min-avg-file-size"},
		{"retention below floor", "expire:\n  older-than: 5m\n", "retention floor"},
		{"malformed duration", "orphans:\n  older-than: soon\n", "soon"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "p.yaml")
			writeFile(t, p, tc.doc)
			r := runCLI(t, wh, false, "maintain", "--table", "geo.t", "--policy", p)
			if r.Code != exitUsage || !strings.Contains(r.Stderr, tc.want) || r.Stdout != "" {
				t.Fatalf("exit %d, stdout %q, stderr %q; want usage error naming %q", r.Code, r.Stdout, r.Stderr, tc.want)
			}
		})
	}
	// Nothing was done: no rewrite snapshot, no lease.
	cat, _ := catalogs.Open(t.Context(), catalogs.Spec{Warehouse: wh})
	tbl, err := catalogs.LoadTable(t.Context(), cat, "geo.t")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(tbl.Metadata().Snapshots()); n != 3 {
		t.Errorf("%d snapshots after refused runs, want 3", n)
	}
}

func TestAdviseCLI(t *testing.T) {
	t.Parallel()
	wh := generated(t, 10)
	r := runCLI(t, wh, false, "advise", "--table", "geo.t", "--spark-catalog", "lake")
	if r.Code != exitOK {
		t.Fatalf("exit %d:\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	for _, want := range []string{"SUGGESTED", "target-file-size-bytes", "cadence", "gate:", "CALL lake.system.rewrite_data_files(table => 'geo.t', strategy => 'sort', sort_order => 'zorder(bbox_minx, bbox_miny)'", "CALL lake.system.expire_snapshots("} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.Stdout)
		}
	}
	r = runCLI(t, wh, false, "--json", "advise", "--table", "geo.t")
	var got struct {
		PolicyYAML string   `json:"policy_yaml"`
		Spark      []string `json:"spark"`
		Target     int64    `json:"target_file_size_bytes"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &got); err != nil {
		t.Fatalf("--json: %v\n%s", err, r.Stdout)
	}
	p, err := maintain.ParsePolicy([]byte(got.PolicyYAML), "advised")
	if err != nil {
		t.Fatalf("advised policy does not load: %v\n%s", err, got.PolicyYAML)
	}
	if p.Rewrite.Options[engine.OptTargetFileSize] != jsonNumber(got.Target) || len(got.Spark) != 2 {
		t.Errorf("policy target %q, advice %d, %d spark calls", p.Rewrite.Options[engine.OptTargetFileSize], got.Target, len(got.Spark))
	}
}

func jsonNumber(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// TestAdviseAfterSortedRewrite: after a Hilbert rewrite into small files
// (what quickstart does), advise keeps their size instead of a target
// that folds them together.
func TestAdviseAfterSortedRewrite(t *testing.T) {
	t.Parallel()
	wh := t.TempDir()
	r := runCLI(t, wh, false, "generate", "--table", "geo.t", "--rows", "40000", "--commits", "8")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	r = runCLI(t, wh, false, "rewrite", "--table", "geo.t", "--curve", "hilbert", "--option", "target-file-size-bytes=131072", "--option", "rewrite-all=true")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	r = runCLI(t, wh, false, "--json", "advise", "--table", "geo.t")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	var got struct {
		Target  int64    `json:"target_file_size_bytes"`
		Avg     int64    `json:"avg_file_bytes"`
		Reasons []string `json:"reasons"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &got), r.Stdout)
	require.Less(t, got.Target, int64(8<<20), "a target below the usual floor")
	require.InDelta(t, got.Avg, got.Target, 1024, "the sorted files' size")
	require.Contains(t, strings.Join(got.Reasons, "\n"), "the last rewrite sorted the table (hilbert")
}
