package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBenchJSONKeys(t *testing.T) {
	t.Parallel()
	wh := t.TempDir()
	if r := runCLI(t, wh, false, "generate", "--table", "b.t", "--rows", "3000", "--commits", "30", "--distribution", "clustered"); r.Code != exitOK {
		t.Fatalf("generate: exit %d: %s", r.Code, r.Stderr)
	}
	svgDir := filepath.Join(t.TempDir(), "pics")
	r := runCLI(t, wh, false, "bench", "--table", "b.t", "--layouts", "unsorted,hilbert", "--window-count", "12",
		"--option", "target-file-size-bytes=20000", "--svg", svgDir, "--json")
	if r.Code != exitOK {
		t.Fatalf("bench: exit %d: %s", r.Code, r.Stderr)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, r.Stdout)
	}
	if doc["windows"] != 12.0 {
		t.Fatalf("windows = %v, want 12", doc["windows"])
	}
	layouts, _ := doc["layouts"].([]any)
	if len(layouts) != 2 {
		t.Fatalf("%d layouts, want 2", len(layouts))
	}
	keys := []string{"layout", "files", "bytes", "mean_files_planned", "median_files_planned", "p95_files_planned",
		"mean_bytes_planned", "ratio_to_lower_bound", "mean_overlap_depth", "max_overlap_depth",
		"row_groups", "row_group_area", "mean_row_groups_read", "mean_row_group_bytes_read"}
	for i, l := range layouts {
		m := l.(map[string]any)
		for _, k := range keys {
			if _, ok := m[k]; !ok {
				t.Errorf("layout %d has no %q", i, k)
			}
		}
		if m["layout"] != []string{"unsorted", "hilbert"}[i] {
			t.Errorf("layout %d is %v", i, m["layout"])
		}
		if m["files"].(float64) < 2 {
			t.Errorf("layout %v has %v files; want the table cut at the target size", m["layout"], m["files"])
		}
		if _, err := os.Stat(filepath.Join(svgDir, m["layout"].(string)+".svg")); err != nil {
			t.Errorf("no picture: %v", err)
		}
	}
	// The scratch tables were dropped: a second run needs no --keep.
	r = runCLI(t, wh, false, "bench", "--table", "b.t", "--layouts", "unsorted", "--window-count", "5", "--csv")
	if r.Code != exitOK {
		t.Fatalf("bench --csv: exit %d: %s", r.Code, r.Stderr)
	}
	rows, err := csv.NewReader(strings.NewReader(r.Stdout)).ReadAll()
	if err != nil || len(rows) != 2 || rows[0][2] != "layout" || rows[1][2] != "unsorted" {
		t.Fatalf("csv %q (%v)", r.Stdout, err)
	}
}

func TestBenchUsageErrors(t *testing.T) {
	t.Parallel()
	bad := filepath.Join(t.TempDir(), "w.json")
	writeFile(t, bad, `[{"minx":3,"miny":0,"maxx":1,"maxy":1}]`)
	for _, args := range [][]string{
		{"bench", "--table", "b.t", "--layouts", "unsorted,spiral"},
		{"bench", "--table", "b.t", "--window-area", "2"},
		{"bench", "--table", "b.t", "--window-placement", "edges"},
		{"bench", "--table", "b.t", "--option", "no-such-option=1"},
		{"bench", "--table", "b.t", "--windows", bad},
		{"bench", "--table", "b.t", "--csv", "--json"},
	} {
		if r := runCLI(t, "", false, args...); r.Code != exitUsage {
			t.Errorf("%v: exit %d, want %d; stderr %q", args, r.Code, exitUsage, r.Stderr)
		}
	}
}

func TestBenchHumanTable(t *testing.T) {
	t.Parallel()
	wh := t.TempDir()
	if r := runCLI(t, wh, false, "generate", "--table", "b.h", "--rows", "500", "--commits", "5"); r.Code != exitOK {
		t.Fatalf("generate: exit %d: %s", r.Code, r.Stderr)
	}
	r := runCLI(t, wh, true, "bench", "--table", "b.h", "--layouts", "unsorted", "--window-count", "5")
	if r.Code != exitOK {
		t.Fatalf("bench: exit %d: %s", r.Code, r.Stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "LAYOUT") || !strings.HasPrefix(lines[1], "unsorted") {
		t.Fatalf("table:\n%s", r.Stdout)
	}
	if !strings.Contains(r.Stderr, "5 windows") {
		t.Fatalf("stderr %q does not describe the windows", r.Stderr)
	}
}

// TestBenchPointsToTheRewriteItMeasured: bench measures layouts at its
// own target file size, so it says how to write the best one at that
// size; the rewrite it names then does what bench measured.
func TestBenchPointsToTheRewriteItMeasured(t *testing.T) {
	t.Parallel()
	wh := t.TempDir()
	if r := runCLI(t, wh, false, "generate", "--table", "b.h", "--rows", "2000", "--commits", "5"); r.Code != exitOK {
		t.Fatalf("generate: exit %d: %s", r.Code, r.Stderr)
	}
	r := runCLI(t, wh, true, "bench", "--table", "b.h", "--layouts", "unsorted,hilbert", "--window-count", "5")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	re := regexp.MustCompile(`geocompact (rewrite --table b\.h --curve hilbert --option target-file-size-bytes=\d+ --option rewrite-all=true)`)
	m := re.FindStringSubmatch(r.Stderr)
	require.NotNil(t, m, r.Stderr)
	hint := runCLI(t, wh, false, append(strings.Fields(m[1]), "--json")...)
	require.Equal(t, exitOK, hint.Code, hint.Stderr)
	assert.NotContains(t, hint.Stdout, `"noop_reason"`, "the rewrite bench names does something")
}
