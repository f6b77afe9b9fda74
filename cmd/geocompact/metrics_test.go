package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/maintain"
)

// promSample is one parsed sample line.
type promSample struct {
	name   string
	labels map[string]string
	value  float64
}

var (
	promMetaRe   = regexp.MustCompile(`^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.+)$`)
	promSampleRe = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)\{(.*)\} (\S+)$`)
)

// parsePrometheus parses the text exposition format as written by
// writePrometheus, checking its structure line by line: every family has a
// HELP line, then a TYPE gauge line, then its samples; every sample belongs
// to the family announced last; label values are properly escaped.
func parsePrometheus(t *testing.T, text string) []promSample {
	t.Helper()
	if !strings.HasSuffix(text, "\n") {
		t.Fatalf("output does not end with a line feed")
	}
	var samples []promSample
	var family string
	var state string // "help" after HELP, "type" after TYPE
	seen := map[string]bool{}
	for i, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		n := i + 1
		if m := promMetaRe.FindStringSubmatch(line); m != nil {
			switch m[1] {
			case "HELP":
				if seen[m[2]] {
					t.Fatalf("line %d: family %s announced twice", n, m[2])
				}
				seen[m[2]] = true
				family, state = m[2], "help"
			case "TYPE":
				if m[2] != family || state != "help" {
					t.Fatalf("line %d: TYPE for %s does not follow its HELP", n, m[2])
				}
				if m[3] != "gauge" {
					t.Fatalf("line %d: type %q, want gauge", n, m[3])
				}
				state = "type"
			}
			if !strings.HasPrefix(m[2], "geocompact_table_") {
				t.Fatalf("line %d: metric %s lacks the geocompact_table_ prefix", n, m[2])
			}
			continue
		}
		m := promSampleRe.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("line %d is neither HELP, TYPE nor a sample: %q", n, line)
		}
		if m[1] != family || state != "type" {
			t.Fatalf("line %d: sample of %s outside its family (last announced %s)", n, m[1], family)
		}
		labels, err := parsePromLabels(m[2])
		if err != nil {
			t.Fatalf("line %d: %v", n, err)
		}
		v, err := strconv.ParseFloat(m[3], 64)
		if err != nil {
			t.Fatalf("line %d: value %q: %v", n, m[3], err)
		}
		samples = append(samples, promSample{name: m[1], labels: labels, value: v})
	}
	return samples
}

// parsePromLabels parses name="value",... with the format's escapes.
func parsePromLabels(s string) (map[string]string, error) {
	labels := map[string]string{}
	for s != "" {
		eq := strings.IndexByte(s, '=')
		if eq <= 0 || eq+1 >= len(s) || s[eq+1] != '"' {
			return nil, fmt.Errorf("bad label at %q", s)
		}
		name := s[:eq]
		var val strings.Builder
		i := eq + 2
		for ; i < len(s) && s[i] != '"'; i++ {
			c := s[i]
			if c == '\n' {
				return nil, fmt.Errorf("raw line feed in label %s", name)
			}
			if c != '\\' {
				val.WriteByte(c)
				continue
			}
			i++
			if i >= len(s) {
				return nil, fmt.Errorf("dangling escape in label %s", name)
			}
			switch s[i] {
			case '\\':
				val.WriteByte('\\')
			case '"':
				val.WriteByte('"')
			case 'n':
				val.WriteByte('\n')
			default:
				return nil, fmt.Errorf("bad escape \\%c in label %s", s[i], name)
			}
		}
		if i >= len(s) {
			return nil, fmt.Errorf("unterminated value of label %s", name)
		}
		if _, dup := labels[name]; dup {
			return nil, fmt.Errorf("label %s twice", name)
		}
		labels[name] = val.String()
		s = s[i+1:]
		if strings.HasPrefix(s, ",") {
			s = s[1:]
		} else if s != "" {
			return nil, fmt.Errorf("junk after label %s: %q", name, s)
		}
	}
	return labels, nil
}

func TestMetricsPrometheus(t *testing.T) {
	t.Parallel()
	wh := t.TempDir()
	generateForTest(t, wh, "--table", "demo.pings", "--rows", "500", "--commits", "5", "--partition-by", "day(ts)", "--seed", "3")
	r := runCLI(t, wh, false, "metrics", "--table", "demo.pings", "--format", "prometheus")
	if r.Code != exitOK || r.Stderr != "" {
		t.Fatalf("exit %d, stderr %q", r.Code, r.Stderr)
	}
	samples := parsePrometheus(t, r.Stdout)

	rj := runCLI(t, wh, false, "metrics", "--table", "demo.pings", "--format", "json")
	var m maintain.TableMetrics
	if err := json.Unmarshal([]byte(rj.Stdout), &m); err != nil {
		t.Fatalf("json: %v\n%s", err, rj.Stdout)
	}
	want := map[string]float64{
		"geocompact_table_file_count":        float64(m.FileCount),
		"geocompact_table_avg_file_bytes":    float64(m.AvgFileBytes),
		"geocompact_table_total_bytes":       float64(m.TotalBytes),
		"geocompact_table_total_records":     500,
		"geocompact_table_snapshot_count":    5,
		"geocompact_table_manifest_count":    5,
		"geocompact_table_delete_file_count": 0,
		"geocompact_table_partition_count":   3,
	}
	got := map[string]float64{}
	partFiles := map[string]float64{}
	for _, s := range samples {
		if s.labels["table"] != "demo.pings" {
			t.Errorf("%s: table label %q", s.name, s.labels["table"])
		}
		if p, ok := s.labels["partition"]; ok {
			if s.name == "geocompact_table_partition_file_count" {
				partFiles[p] = s.value
			}
			continue
		}
		got[s.name] = s.value
	}
	for name, w := range want {
		if g, ok := got[name]; !ok || g != w {
			t.Errorf("%s = %v (present %v), want %v", name, g, ok, w)
		}
	}
	for _, age := range []string{"geocompact_table_oldest_snapshot_age_seconds", "geocompact_table_current_snapshot_age_seconds"} {
		if g, ok := got[age]; !ok || g < 0 || g > 600 {
			t.Errorf("%s = %v (present %v), want a recent age", age, g, ok)
		}
	}
	wantParts := map[string]float64{}
	for _, p := range m.Partitions {
		wantParts[p.Partition] = float64(p.FileCount)
	}
	if fmt.Sprint(partFiles) != fmt.Sprint(wantParts) || len(partFiles) != 3 {
		t.Errorf("per-partition file counts %v, want %v", partFiles, wantParts)
	}
}

func TestWritePrometheusEscapes(t *testing.T) {
	t.Parallel()
	name := "odd\"ns\\x\ny.t"
	m := &maintain.TableMetrics{FileCount: 2, Partitions: []maintain.PartitionMetrics{{Partition: `k="a\b"`, FileCount: 2}}}
	var b bytes.Buffer
	if err := writePrometheus(&b, name, m); err != nil {
		t.Fatal(err)
	}
	samples := parsePrometheus(t, b.String())
	var sawPart bool
	for _, s := range samples {
		if s.labels["table"] != name {
			t.Fatalf("%s: table label %q, want %q", s.name, s.labels["table"], name)
		}
		if p, ok := s.labels["partition"]; ok {
			sawPart = true
			if p != `k="a\b"` {
				t.Errorf("partition label %q", p)
			}
		}
	}
	if !sawPart {
		t.Error("no partition series")
	}
}

func TestMetricsTextTable(t *testing.T) {
	t.Parallel()
	wh := t.TempDir()
	generateForTest(t, wh, "--table", "demo.pings", "--rows", "300", "--commits", "3")
	for _, tty := range []bool{false, true} {
		r := runCLI(t, wh, tty, "metrics", "--table", "demo.pings")
		if r.Code != exitOK {
			t.Fatalf("tty=%v: exit %d, stderr %q", tty, r.Code, r.Stderr)
		}
		lines := strings.Split(strings.TrimRight(r.Stdout, "\n"), "\n")
		if len(lines) != 5 || !strings.HasPrefix(lines[0], "TABLE") || !strings.HasPrefix(lines[3], "PARTITION") {
			t.Fatalf("tty=%v: want the table header, one row, a blank line and the partition table:\n%s", tty, r.Stdout)
		}
		fields := strings.Fields(lines[1])
		if fields[0] != "demo.pings" || fields[1] != "3" {
			t.Errorf("tty=%v: row %q, want demo.pings with 3 files", tty, lines[1])
		}
		if human := strings.Contains(lines[1], "KiB"); human != tty {
			t.Errorf("tty=%v, human units=%v: %q", tty, human, lines[1])
		}
	}
}

// TestReadCommandsBadInput checks that inspect and metrics refuse bad input
// with one line on stderr naming the problem, nothing on stdout, the right
// exit code, and nothing written to the warehouse.
func TestReadCommandsBadInput(t *testing.T) {
	t.Parallel()
	wh := t.TempDir()
	generateForTest(t, wh, "--table", "demo.pings", "--rows", "100", "--commits", "2")
	fresh := filepath.Join(t.TempDir(), "never")
	unreachable := filepath.Join(t.TempDir(), "pg.yaml")
	writeFile(t, unreachable, `catalogs:
  down:
    type: sql
    warehouse: /tmp/geocompact-unreachable
    properties:
      uri: postgres://u:secretpw@127.0.0.1:1/db?sslmode=disable&connect_timeout=5
      sql.dialect: postgres
`)
	tests := []struct {
		name      string
		warehouse string
		args      []string
		code      int
		mention   []string
	}{
		{"unknown table", wh, []string{"inspect", "files", "--table", "demo.nope"}, exitError, []string{"demo.nope", "does not exist"}},
		{"unknown namespace", wh, []string{"metrics", "--table", "nope.pings"}, exitError, []string{`namespace "nope"`}},
		{"no catalog in warehouse", fresh, []string{"metrics", "--table", "demo.pings"}, exitError, []string{"demo.pings", fresh}},
		{"unknown catalog", wh, []string{"--catalog", "nope", "metrics", "--table", "demo.pings"}, exitError, []string{`"nope"`}},
		{"unreachable catalog", wh, []string{"--config", unreachable, "--catalog", "down", "inspect", "snapshots", "--table", "demo.pings"}, exitError, []string{`"down"`, "127.0.0.1:1"}},
		{"bad identifier", wh, []string{"inspect", "files", "--table", "pings"}, exitUsage, []string{"NAMESPACE.TABLE"}},
		{"missing table flag", wh, []string{"inspect", "history"}, exitUsage, []string{"--table"}},
		{"metrics missing table flag", wh, []string{"metrics"}, exitUsage, []string{"table"}},
		{"unknown metadata table", wh, []string{"inspect", "refs", "--table", "demo.pings"}, exitUsage, []string{"refs"}},
		{"inspect without kind", wh, []string{"inspect", "--table", "demo.pings"}, exitUsage, []string{"files"}},
		{"bad format", wh, []string{"metrics", "--table", "demo.pings", "--format", "xml"}, exitUsage, []string{"xml"}},
		{"json and prometheus", wh, []string{"--json", "metrics", "--table", "demo.pings", "--format", "prometheus"}, exitUsage, []string{"--json", "prometheus"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runCLI(t, tc.warehouse, false, tc.args...)
			if r.Code != tc.code {
				t.Fatalf("exit %d, want %d; stderr %q", r.Code, tc.code, r.Stderr)
			}
			if r.Stdout != "" {
				t.Errorf("stdout %q, want nothing", r.Stdout)
			}
			if strings.Count(r.Stderr, "\n") != 1 || !strings.HasPrefix(r.Stderr, "geocompact: ") {
				t.Errorf("stderr %q, want one geocompact: line", r.Stderr)
			}
			for _, s := range tc.mention {
				if !strings.Contains(r.Stderr, s) {
					t.Errorf("stderr %q does not mention %q", r.Stderr, s)
				}
			}
			if strings.Contains(r.Stderr, "secretpw") {
				t.Errorf("stderr %q shows the password", r.Stderr)
			}
		})
	}
	if _, err := os.Stat(fresh); !os.IsNotExist(err) {
		t.Errorf("a failed read created the warehouse %s (stat: %v)", fresh, err)
	}
	if _, err := os.Stat("/tmp/geocompact-unreachable"); err == nil {
		t.Errorf("an unreachable catalog's warehouse was created")
	}
}

func TestMetricsLayoutHealth(t *testing.T) {
	t.Parallel()
	wh := t.TempDir()
	generateForTest(t, wh, "--table", "demo.pings", "--rows", "2000", "--commits", "8", "--distribution", "clustered", "--seed", "3")
	windows := filepath.Join(t.TempDir(), "w.json")
	require.NoError(t, os.WriteFile(windows, []byte(`[{"minx":-180,"miny":-90,"maxx":180,"maxy":90},{"minx":500,"miny":500,"maxx":501,"maxy":501}]`), 0o644))
	r := runCLI(t, wh, false, "metrics", "--table", "demo.pings", "--format", "prometheus", "--windows", windows)
	require.Equal(t, exitOK, r.Code, r.Stderr)
	got := map[string]float64{}
	for _, s := range parsePrometheus(t, r.Stdout) {
		if _, ok := s.labels["partition"]; ok {
			got[s.name] = s.value
		}
	}
	// Eight arrival files all span the map: every point is under all of
	// them; the whole world plans all 8, a window off the map none.
	assert.Equal(t, map[string]float64{
		"geocompact_table_partition_file_count":                8,
		"geocompact_table_partition_avg_file_bytes":            got["geocompact_table_partition_avg_file_bytes"],
		"geocompact_table_partition_total_bytes":               got["geocompact_table_partition_total_bytes"],
		"geocompact_table_partition_overlap_depth_mean_files":  8,
		"geocompact_table_partition_overlap_depth_max_files":   8,
		"geocompact_table_partition_unbounded_files":           0,
		"geocompact_table_partition_window_planned_mean_files": 4,
		// One row group a file, every one read by the whole world.
		"geocompact_table_partition_row_group_count":             8,
		"geocompact_table_partition_row_group_area_ratio":        1,
		"geocompact_table_partition_row_group_unbounded_files":   0,
		"geocompact_table_partition_window_read_mean_row_groups": 4,
	}, got)

	// Without --windows the planned family is left out; the text table
	// shows the depths.
	r = runCLI(t, wh, false, "metrics", "--table", "demo.pings", "--format", "prometheus")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	assert.NotContains(t, r.Stdout, "window_planned")
	r = runCLI(t, wh, false, "metrics", "--table", "demo.pings")
	require.Equal(t, exitOK, r.Code, r.Stderr)
	assert.Regexp(t, `(?m)^-\s+8\s+\d+\s+\d+\s+8\.00\s+8\s+-\s+8\s+1\.000\s+-$`, r.Stdout)

	r = runCLI(t, wh, false, "metrics", "--table", "demo.pings", "--windows", filepath.Join(t.TempDir(), "missing.json"))
	assert.Equal(t, exitUsage, r.Code)
	assert.Contains(t, r.Stderr, "--windows")
}
