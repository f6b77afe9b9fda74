package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/validate"
	"github.com/geocompact/geocompact/validate/validatetest"
)

func fixture(name string) string {
	return filepath.Join("..", "..", "testdata", "geoparquet", name+".parquet")
}

func TestValidateExitCodes(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		out  []string // substrings of stdout
		err  string   // substring of stderr
	}{
		{"clean", []string{fixture("ok-omitted-crs"), fixture("ok-big-endian")}, exitOK, []string{"ok-omitted-crs.parquet: 8 rows, ok", "ok-big-endian.parquet: 2 rows, ok"}, ""},
		{"warning only", []string{fixture("ok-antimeridian-warning")}, exitOK, []string{"bbox.antimeridian (warning)"}, ""},
		{"violations", []string{fixture("ok-omitted-crs"), fixture("bad-bbox.mismatch")}, exitViolation, []string{"1 violations", "bbox.mismatch", "ROW", "5 "}, ""},
		{"corrupt file is a violation", []string{fixture("bad-file.corrupt_truncated")}, exitViolation, []string{"file.corrupt"}, ""},
		{"expected CRS", []string{"--crs", "EPSG:4326", fixture("ok-omitted-crs")}, exitViolation, []string{"crs.mismatch"}, ""},
		{"tolerance flag", []string{"--tolerance", "0.01", fixture("bad-bbox.mismatch")}, exitOK, []string{"ok"}, ""},
		{"allow null flag", []string{"--allow-null", fixture("bad-geometry.null")}, exitOK, []string{"ok"}, ""},
		{"missing file", []string{filepath.Join(t.TempDir(), "nope.parquet")}, exitError, nil, "nope.parquet"},
		{"no input", nil, exitUsage, nil, "FILE"},
		{"bad crs flag", []string{"--crs", "WGS84", fixture("ok-omitted-crs")}, exitUsage, nil, "--crs"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runCLI(t, "", false, append([]string{"validate"}, tc.args...)...)
			if r.Code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout %s\nstderr %s", r.Code, tc.code, r.Stdout, r.Stderr)
			}
			for _, s := range tc.out {
				if !strings.Contains(r.Stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, r.Stdout)
				}
			}
			if !strings.Contains(r.Stderr, tc.err) {
				t.Errorf("stderr %q lacks %q", r.Stderr, tc.err)
			}
			if tc.code == exitViolation && r.Stderr != "" {
				t.Errorf("violations printed to stderr too: %q", r.Stderr)
			}
		})
	}
}

func TestValidateJSON(t *testing.T) {
	r := runCLI(t, "", false, "--json", "validate", "--max-examples", "1", fixture("bad-wkb.ring-open"), fixture("ok-polygons"))
	if r.Code != exitViolation {
		t.Fatalf("exit %d: %s %s", r.Code, r.Stdout, r.Stderr)
	}
	var got struct {
		OK     bool `json:"ok"`
		Inputs []struct {
			Input      string `json:"input"`
			OK         bool   `json:"ok"`
			Violations int64  `json:"violations"`
			Report     struct {
				Rows     int64            `json:"rows"`
				Counts   map[string]int64 `json:"counts"`
				Examples []struct {
					Row    int64  `json:"row"`
					Code   string `json:"code"`
					Detail string `json:"detail"`
				} `json:"examples"`
				Geometry *validate.GeometryInfo `json:"geometry"`
			} `json:"report"`
		} `json:"inputs"`
	}
	dec := json.NewDecoder(strings.NewReader(r.Stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("decode %s: %v", r.Stdout, err)
	}
	if got.OK || len(got.Inputs) != 2 {
		t.Fatalf("got %+v", got)
	}
	in := got.Inputs[0]
	if in.OK || in.Violations != 1 || in.Report.Rows != 1 || len(in.Report.Examples) != 1 {
		t.Fatalf("first input %+v", in)
	}
	if diff := cmp.Diff(map[string]int64{"wkb.ring-open": 1}, in.Report.Counts); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
	if ex := in.Report.Examples[0]; ex.Row != 0 || ex.Code != "wkb.ring-open" || ex.Detail == "" {
		t.Errorf("example %+v", ex)
	}
	if !got.Inputs[1].OK || got.Inputs[1].Report.Counts == nil || got.Inputs[1].Report.Examples == nil {
		t.Errorf("clean input %+v: counts and examples must be present, empty", got.Inputs[1])
	}
	assert.Equal(t, &validate.GeometryInfo{Column: "geometry", Encoding: "wkb", CRS: "OGC:CRS84", Types: []string{"Polygon"}, BBox: []float64{-10, 0, 1, 7.5}},
		got.Inputs[1].Report.Geometry, "a clean file's geometry summary")
}

// TestValidateStrictHints checks that a malformed GeoParquet hint (flat
// covering paths) is a warning that passes, fails under --strict, and that
// a clean run prints the file's geometry summary.
func TestValidateStrictHints(t *testing.T) {
	p := filepath.Join(t.TempDir(), "flat.parquet")
	validatetest.Write(t, p, validatetest.File{Rows: validatetest.Points(3), Geo: validatetest.GeoFlatCovering})

	r := runCLI(t, "", false, "validate", p)
	require.Equal(t, exitOK, r.Code, r.Stdout+r.Stderr)
	assert.Contains(t, r.Stdout, "geo.covering-flat (warning)")
	assert.Contains(t, r.Stdout, "geometry column geometry (wkb), crs OGC:CRS84, types Point, bbox [-179.5, -89.75, -177.5, -87.75]")

	r = runCLI(t, "", false, "validate", "--strict", p)
	assert.Equal(t, exitViolation, r.Code, r.Stdout+r.Stderr)
	assert.Contains(t, r.Stdout, "1 violations")
}

// TestValidateTTY checks stdout carries the same report on a terminal and
// in a pipe, and that progress goes to stderr only on a terminal.
func TestValidateTTY(t *testing.T) {
	args := []string{"validate", fixture("ok-polygons"), fixture("bad-wkb.trailing")}
	piped := runCLI(t, "", false, args...)
	tty := runCLI(t, "", true, args...)
	if piped.Code != exitViolation || tty.Code != exitViolation {
		t.Fatalf("exit %d / %d", piped.Code, tty.Code)
	}
	if piped.Stdout != tty.Stdout {
		t.Errorf("stdout differs:\npiped %q\ntty   %q", piped.Stdout, tty.Stdout)
	}
	if piped.Stderr != "" {
		t.Errorf("piped stderr %q, want nothing", piped.Stderr)
	}
}
