package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the testdata/*.golden files from the current output")

// generateForTest runs geocompact generate in warehouse and fails the test
// if it does not succeed.
func generateForTest(t testing.TB, warehouse string, args ...string) {
	t.Helper()
	r := runCLI(t, warehouse, false, append([]string{"generate"}, args...)...)
	if r.Code != exitOK {
		t.Fatalf("generate %v: exit %d, stderr %s", args, r.Code, r.Stderr)
	}
}

// volatileKeys are the JSON keys whose values change from run to run
// (ids, times, paths) or with the Parquet writer's version (sizes); the
// golden files show them masked, keeping only whether they are null.
var volatileKeys = map[string]bool{
	"file_path": true, "path": true, "manifest_list": true,
	"snapshot_id": true, "parent_id": true, "added_snapshot_id": true, "last_updated_snapshot_id": true,
	"committed_at": true, "made_current_at": true, "last_updated_at": true,
	"file_size_in_bytes": true, "length": true, "total_data_file_size_in_bytes": true,
	"avg_file_bytes": true, "total_bytes": true, "split_offsets": true,
	"oldest_snapshot_age_seconds": true, "current_snapshot_age_seconds": true,
	"iceberg-version": true,
}

// jsonObject is a decoded JSON object that keeps its key order, so golden
// files show the order the output has.
type jsonObject []jsonMember

type jsonMember struct {
	Key   string
	Value any
}

func (o jsonObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.Key)
		v, err := json.Marshal(m.Value)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// decodeOrdered decodes one JSON value, objects as jsonObject.
func decodeOrdered(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		obj := jsonObject{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := decodeOrdered(dec)
			if err != nil {
				return nil, err
			}
			obj = append(obj, jsonMember{Key: k.(string), Value: v})
		}
		_, err := dec.Token()
		return obj, err
	case json.Delim('['):
		arr := []any{}
		for dec.More() {
			v, err := decodeOrdered(dec)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		_, err := dec.Token()
		return arr, err
	}
	return tok, nil
}

// maskVolatile replaces volatile values in decoded JSON with "MASKED".
// Every value of a column_sizes map, and summary entries about sizes, are
// masked too. (Maps keyed by data, such as summary and bounds, come out of
// encoding/json sorted by key, so their order is stable.)
func maskVolatile(v any, parent string) any {
	switch v := v.(type) {
	case jsonObject:
		for i, m := range v {
			switch {
			case m.Value == nil:
			case volatileKeys[m.Key], parent == "column_sizes", parent == "summary" && strings.Contains(m.Key, "size"):
				v[i].Value = "MASKED"
			default:
				v[i].Value = maskVolatile(m.Value, m.Key)
			}
		}
	case []any:
		for i := range v {
			v[i] = maskVolatile(v[i], parent)
		}
	}
	return v
}

// checkGolden compares the JSON document got, masked, with
// testdata/name.golden, or rewrites the file under -update. Key order is
// compared too. sortRows sorts a top-level array by each row's masked JSON,
// for tables whose row order is not deterministic (a commit that spans
// partitions writes its files in any order).
func checkGolden(t *testing.T, name, got string, sortRows bool) {
	t.Helper()
	doc, err := decodeOrdered(json.NewDecoder(strings.NewReader(got)))
	if err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, got)
	}
	doc = maskVolatile(doc, "")
	if rows, ok := doc.([]any); ok && sortRows {
		key := func(v any) string { b, _ := json.Marshal(v); return string(b) }
		slices.SortFunc(rows, func(a, b any) int { return strings.Compare(key(a), key(b)) })
	}
	masked, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	masked = append(masked, '\n')
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, masked, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/geocompact -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(masked)); diff != "" {
		t.Errorf("%s differs (-want +got); run go test ./cmd/geocompact -update if the change is intended:\n%s", path, diff)
	}
}

// inspectFixture is a warehouse with a partitioned v2 table and an
// unpartitioned v3 table, built once per test binary.
func inspectFixture(t *testing.T) string {
	t.Helper()
	wh := t.TempDir()
	generateForTest(t, wh, "--table", "demo.v2", "--rows", "400", "--commits", "4", "--partition-by", "day(ts)", "--seed", "11", "--extent", "0,0,100,50")
	generateForTest(t, wh, "--table", "demo.v3", "--rows", "300", "--commits", "3", "--format-version", "3", "--seed", "12", "--extent", "0,0,100,50")
	return wh
}

func TestInspectJSONGolden(t *testing.T) {
	t.Parallel()
	wh := inspectFixture(t)
	tests := []struct {
		golden string
		args   []string
	}{
		{"inspect_files_v2", []string{"inspect", "files", "--table", "demo.v2"}},
		{"inspect_files_v3", []string{"inspect", "files", "--table", "demo.v3"}},
		{"inspect_snapshots", []string{"inspect", "snapshots", "--table", "demo.v3"}},
		{"inspect_manifests", []string{"inspect", "manifests", "--table", "demo.v2"}},
		{"inspect_partitions", []string{"inspect", "partitions", "--table", "demo.v2"}},
		{"inspect_history", []string{"inspect", "history", "--table", "demo.v3"}},
		{"metrics_v2", []string{"metrics", "--table", "demo.v2", "--format", "json"}},
		{"metrics_v3", []string{"--json", "metrics", "--table", "demo.v3"}},
	}
	for _, tc := range tests {
		t.Run(tc.golden, func(t *testing.T) {
			args := tc.args
			if args[0] == "inspect" {
				args = append([]string{"--json"}, args...)
			}
			r := runCLI(t, wh, false, args...)
			if r.Code != exitOK || r.Stderr != "" {
				t.Fatalf("exit %d, stderr %q", r.Code, r.Stderr)
			}
			checkGolden(t, tc.golden, r.Stdout, strings.HasPrefix(tc.golden, "inspect_files"))
		})
	}
}

func TestInspectTextTable(t *testing.T) {
	t.Parallel()
	wh := inspectFixture(t)
	tests := []struct {
		kind   string
		header string
		rows   int
	}{
		{"files", "FILE", 4 + 2},          // 4 commits over 3 days: some commits span two
		{"snapshots", "COMMITTED AT", 4},  //
		{"manifests", "PATH", 4},          //
		{"partitions", "PARTITION", 3},    // 2026-01-01 .. 2026-01-03
		{"history", "MADE CURRENT AT", 4}, //
	}
	for _, tc := range tests {
		for _, tty := range []bool{false, true} {
			t.Run(tc.kind+map[bool]string{false: "/piped", true: "/tty"}[tty], func(t *testing.T) {
				r := runCLI(t, wh, tty, "inspect", tc.kind, "--table", "demo.v2")
				if r.Code != exitOK {
					t.Fatalf("exit %d, stderr %q", r.Code, r.Stderr)
				}
				lines := strings.Split(strings.TrimRight(r.Stdout, "\n"), "\n")
				if !strings.HasPrefix(lines[0], tc.header) {
					t.Fatalf("header %q, want it to start with %q", lines[0], tc.header)
				}
				if tc.kind != "files" && len(lines)-1 != tc.rows {
					t.Errorf("%d rows, want %d:\n%s", len(lines)-1, tc.rows, r.Stdout)
				}
				if tc.kind == "files" && len(lines)-1 < 4 {
					t.Errorf("%d file rows, want at least one per commit:\n%s", len(lines)-1, r.Stdout)
				}
				if tc.kind == "files" || tc.kind == "partitions" || tc.kind == "manifests" {
					human := strings.Contains(r.Stdout, "KiB")
					if human != tty {
						t.Errorf("tty=%v but human units shown=%v:\n%s", tty, human, r.Stdout)
					}
				}
				if tc.kind == "files" && !tty && !strings.Contains(r.Stdout, "file://") {
					t.Errorf("piped files table does not show full paths:\n%s", r.Stdout)
				}
			})
		}
	}
}

func TestInspectFilesBBoxWithinExtent(t *testing.T) {
	t.Parallel()
	wh := inspectFixture(t)
	for _, tbl := range []string{"demo.v2", "demo.v3"} {
		t.Run(tbl, func(t *testing.T) {
			r := runCLI(t, wh, false, "--json", "inspect", "files", "--table", tbl)
			if r.Code != exitOK {
				t.Fatalf("exit %d, stderr %q", r.Code, r.Stderr)
			}
			var files []struct {
				RecordCount int64 `json:"record_count"`
				BBox        *struct {
					MinX, MinY, MaxX, MaxY float64
				} `json:"bbox"`
			}
			if err := json.NewDecoder(bytes.NewReader([]byte(r.Stdout))).Decode(&files); err != nil {
				t.Fatal(err)
			}
			var rows int64
			for i, f := range files {
				rows += f.RecordCount
				b := f.BBox
				if b == nil || b.MinX < 0 || b.MinY < 0 || b.MaxX > 100 || b.MaxY > 50 || b.MinX > b.MaxX || b.MinY > b.MaxY {
					t.Errorf("file %d: bbox %+v, want one inside the extent 0,0,100,50", i, b)
				}
			}
			if want := map[string]int64{"demo.v2": 400, "demo.v3": 300}[tbl]; rows != want {
				t.Errorf("files hold %d records, want %d", rows, want)
			}
		})
	}
}
