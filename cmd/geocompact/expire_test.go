package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/geocompact/geocompact/maintain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// generated returns a warehouse with a fragmented table geo.t.
func generated(t testing.TB, commits int) string {
	t.Helper()
	wh := t.TempDir()
	if r := runCLI(t, wh, false, "generate", "--table", "geo.t", "--rows", "600", "--commits", strconv.Itoa(commits)); r.Code != 0 {
		t.Fatalf("generate: %d %s", r.Code, r.Stderr)
	}
	return wh
}

func TestExpireCLI(t *testing.T) {
	t.Parallel()
	wh := generated(t, 6)
	if r := runCLI(t, wh, false, "rewrite", "--table", "geo.t", "--option", "min-input-files=2"); r.Code != 0 {
		t.Fatalf("rewrite: %d %s", r.Code, r.Stderr)
	}

	bad := []struct {
		name string
		args []string
		want []string
	}{
		{"malformed duration", []string{"--older-than", "5 days"}, []string{"5 days", "5d"}},
		{"malformed timestamp", []string{"--older-than", "2026-02-30T00:00:00Z"}, []string{"2026-02-30"}},
		{"future timestamp", []string{"--older-than", "2999-01-01T00:00:00Z"}, []string{"future"}},
		{"below the floor", []string{"--older-than", "10m"}, []string{"retention floor", "--force", "time-travel"}},
		{"retain-last zero", []string{"--retain-last", "0"}, []string{"retain-last"}},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			r := runCLI(t, wh, false, append([]string{"expire", "--table", "geo.t"}, tc.args...)...)
			if r.Code != exitUsage {
				t.Fatalf("exit %d, want %d; stderr %q", r.Code, exitUsage, r.Stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.Stderr, w) {
					t.Errorf("stderr %q lacks %q", r.Stderr, w)
				}
			}
		})
	}

	t.Run("default keeps fresh snapshots", func(t *testing.T) {
		r := runCLI(t, wh, false, "expire", "--table", "geo.t")
		if r.Code != exitOK || !strings.Contains(r.Stdout, "nothing to expire") {
			t.Fatalf("exit %d:\n%s%s", r.Code, r.Stdout, r.Stderr)
		}
	})

	t.Run("dry run then real run", func(t *testing.T) {
		r := runCLI(t, wh, true, "expire", "--table", "geo.t", "--older-than", "0s", "--force", "--dry-run")
		if r.Code != exitOK || !strings.Contains(r.Stdout, "dry run: 6 snapshots") || !strings.Contains(r.Stdout, "EXPIRED SNAPSHOT") || !strings.Contains(r.Stdout, "KIND") {
			t.Fatalf("dry run exit %d:\n%s%s", r.Code, r.Stdout, r.Stderr)
		}
		r = runCLI(t, wh, false, "--json", "expire", "--table", "geo.t", "--older-than", "0s", "--force")
		if r.Code != exitOK {
			t.Fatalf("exit %d: %s", r.Code, r.Stderr)
		}
		var res maintain.ExpireResult
		if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil {
			t.Fatalf("stdout is not an expire result: %v\n%s", err, r.Stdout)
		}
		if len(res.ExpiredSnapshots) != 6 || res.DeletedDataFilesCount != 6 || res.FreedBytes <= 0 || res.DryRun {
			t.Fatalf("expired %d snapshots, %d data files, %d bytes", len(res.ExpiredSnapshots), res.DeletedDataFilesCount, res.FreedBytes)
		}
		for _, f := range res.Files {
			if _, err := os.Stat(strings.TrimPrefix(f.Path, "file://")); err == nil {
				t.Errorf("freed file %s still exists", f.Path)
			}
		}
	})

	t.Run("timestamp cutoff", func(t *testing.T) {
		ts := time.Now().Add(-48 * time.Hour).UTC().Format(time.RFC3339)
		r := runCLI(t, wh, false, "expire", "--table", "geo.t", "--older-than", ts)
		if r.Code != exitOK || !strings.Contains(r.Stdout, "nothing to expire") {
			t.Fatalf("exit %d:\n%s%s", r.Code, r.Stdout, r.Stderr)
		}
	})
}

func TestOrphansCLI(t *testing.T) {
	t.Parallel()
	wh := generated(t, 3)
	dir := filepath.Join(wh, "geo.db", "t")
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("table directory: %v", err)
	}
	old := filepath.Join(dir, "data", "crashed-writer.parquet")
	young := filepath.Join(dir, "data", "in-flight.parquet")
	for p, age := range map[string]time.Duration{old: 100 * time.Hour, young: 2 * time.Hour} {
		writeFile(t, p, "PAR1")
		ts := time.Now().Add(-age)
		if err := os.Chtimes(p, ts, ts); err != nil {
			t.Fatal(err)
		}
	}
	if r := runCLI(t, wh, false, "orphans", "--table", "geo.t", "--older-than", "30m"); r.Code != exitUsage || !strings.Contains(r.Stderr, "not committed yet") {
		t.Fatalf("below floor: exit %d, stderr %q", r.Code, r.Stderr)
	}
	if r := runCLI(t, wh, false, "orphans", "--table", "geo.t", "--older-than", "3 days"); r.Code != exitUsage {
		t.Fatalf("malformed: exit %d, stderr %q", r.Code, r.Stderr)
	}
	r := runCLI(t, wh, false, "orphans", "--table", "geo.t", "--dry-run")
	if r.Code != exitOK || !strings.Contains(r.Stdout, "crashed-writer.parquet") || strings.Contains(r.Stdout, "in-flight") || !strings.Contains(r.Stdout, "dry run: 1 orphan") {
		t.Fatalf("dry run exit %d:\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if _, err := os.Stat(old); err != nil {
		t.Fatal("dry run deleted the orphan")
	}
	r = runCLI(t, wh, false, "orphans", "--table", "geo.t")
	if r.Code != exitOK || !strings.Contains(r.Stdout, "removed 1 orphan files (4 B)") {
		t.Fatalf("exit %d:\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if _, err := os.Stat(old); err == nil {
		t.Error("orphan still there")
	}
	if _, err := os.Stat(young); err != nil {
		t.Error("young file removed")
	}
}

func TestRewriteManifestsCLI(t *testing.T) {
	t.Parallel()
	wh := generated(t, 5)
	r := runCLI(t, wh, false, "rewrite-manifests", "--table", "geo.t")
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	if r.Code != exitOK || len(lines) != 2 || !strings.HasPrefix(lines[0], "MANIFESTS BEFORE") || !strings.HasPrefix(strings.Join(strings.Fields(lines[1]), " "), "5 1 5 1 ") {
		t.Fatalf("exit %d:\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	r = runCLI(t, wh, false, "rewrite-manifests", "--table", "geo.t")
	if r.Code != exitOK || !strings.Contains(r.Stdout, "nothing rewritten") {
		t.Fatalf("second run exit %d:\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// TestOrphansListQuotesHostileNames checks that an orphan whose name holds
// a line break and an escape sequence is listed quoted on one line: a
// writer of the table's directory cannot forge the dry run's report.
func TestOrphansListQuotesHostileNames(t *testing.T) {
	wh := generated(t, 2)
	p := filepath.Join(wh, "geo.db", "t", "data", "x.parquet\ndry run: 0 orphan files \x1b[1A")
	writeFile(t, p, "PAR1")
	ts := time.Now().Add(-100 * time.Hour)
	require.NoError(t, os.Chtimes(p, ts, ts))
	r := runCLI(t, wh, false, "orphans", "--table", "geo.t", "--dry-run")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	assert.NotContains(t, r.Stdout, "\x1b")
	assert.Contains(t, r.Stdout, strconv.Quote(p))
	assert.Contains(t, r.Stdout, "dry run: 1 orphan")
	for _, line := range strings.Split(r.Stdout, "\n") {
		assert.False(t, strings.HasPrefix(line, "dry run: 0"), "a file name forged the line %q", line)
	}
}

// TestExpireResultNamesHeldSnapshots: a snapshot a ref keeps past the
// cutoff is printed with why, the maintain lease's reason included.
func TestExpireResultNamesHeldSnapshots(t *testing.T) {
	var b strings.Builder
	res := &maintain.ExpireResult{Table: "geo.t", RetainLast: 1, HeldByRefs: []maintain.HeldSnapshot{
		{SnapshotID: 42, Timestamp: time.Unix(0, 0).UTC(), Ref: maintain.LeaseRef, RefType: "tag", Reason: "the maintain lease tag points at it"},
	}}
	require.NoError(t, writeExpireResult(&b, res, false))
	assert.Contains(t, b.String(), "retained snapshot 42 (1970-01-01T00:00:00Z): the maintain lease tag points at it")
}
