package validate_test

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/validate"
	"github.com/geocompact/geocompact/validate/validatetest"
)

func TestBatch(t *testing.T) {
	cols := spatial.Columns{Geometry: "geometry", Encoding: spatial.EncodingWKB, CRS: "OGC:CRS84", BBox: spatial.BBoxColumns}
	pt := validatetest.Point
	box := validatetest.Box
	tests := []struct {
		name   string
		rows   []validatetest.Row
		cfg    func(*validate.Config)
		cols   func(*spatial.Columns)
		counts map[string]int64
		ok     bool
	}{
		{name: "clean", rows: validatetest.Points(100), counts: map[string]int64{}, ok: true},
		{
			name:   "null refused",
			rows:   []validatetest.Row{{BBox: box(0, 0, 0, 0)}, {WKB: pt(1, 1), BBox: box(1, 1, 1, 1)}},
			counts: map[string]int64{validate.CodeNull: 1},
		},
		{
			name:   "null allowed, with null bbox",
			rows:   []validatetest.Row{{}, {WKB: pt(1, 1), BBox: box(1, 1, 1, 1)}},
			cfg:    func(c *validate.Config) { c.AllowNull = true },
			counts: map[string]int64{}, ok: true,
		},
		{
			name:   "tolerance flag",
			rows:   []validatetest.Row{{WKB: pt(1, 1), BBox: box(1, 1, 1.01, 1)}},
			cfg:    func(c *validate.Config) { c.Tolerance = 0.1 },
			counts: map[string]int64{}, ok: true,
		},
		{
			name:   "mismatch beyond tolerance",
			rows:   []validatetest.Row{{WKB: pt(1, 1), BBox: box(1, 1, 1.01, 1)}},
			counts: map[string]int64{validate.CodeBBoxMismatch: 1},
		},
		{
			name:   "allowed types",
			rows:   []validatetest.Row{{WKB: pt(1, 1), BBox: box(1, 1, 1, 1)}, {WKB: validatetest.Square(0, 0, 1), BBox: box(0, 0, 1, 1)}},
			cfg:    func(c *validate.Config) { c.AllowedTypes = []string{"Polygon", "MultiPolygon"} },
			counts: map[string]int64{validate.CodeType: 1},
		},
		{
			name:   "antimeridian is a warning in a geographic CRS",
			rows:   []validatetest.Row{{WKB: validatetest.LE().Hdr(2).N(2).F(179, 0, -179, 0).Buf, BBox: box(179, 0, -179, 0)}},
			counts: map[string]int64{validate.CodeAntimeridian: 1}, ok: true,
		},
		{
			name:   "wide x-span is a warning too",
			rows:   []validatetest.Row{{WKB: validatetest.LE().Hdr(2).N(2).F(-179, 0, 179, 0).Buf, BBox: box(-179, 0, 179, 0)}},
			counts: map[string]int64{validate.CodeAntimeridian: 1}, ok: true,
		},
		{
			name:   "inverted bbox in a planar CRS is a mismatch",
			rows:   []validatetest.Row{{WKB: validatetest.LE().Hdr(2).N(2).F(179, 0, -179, 0).Buf, BBox: box(179, 0, -179, 0)}},
			cols:   func(c *spatial.Columns) { c.CRS = "EPSG:3857" },
			counts: map[string]int64{validate.CodeBBoxMismatch: 1},
		},
		{
			name: "every WKB defect is counted",
			rows: []validatetest.Row{
				{WKB: []byte{1, 1}, BBox: box(0, 0, 0, 0)},
				{WKB: append(pt(0, 0), 9), BBox: box(0, 0, 0, 0)},
				{WKB: validatetest.LE().Hdr(1).F(0, math.Inf(-1)).Buf, BBox: box(0, 0, 0, 0)},
			},
			counts: map[string]int64{validate.CodeTruncated: 1, validate.CodeTrailing: 1, validate.CodeNonFinite: 1},
		},
		{
			name:   "wrong geometry column",
			rows:   validatetest.Points(3),
			cols:   func(c *spatial.Columns) { c.Geometry = "shape" },
			counts: map[string]int64{validate.CodeColumn: 1},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := validate.DefaultConfig()
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			c := cols
			if tc.cols != nil {
				tc.cols(&c)
			}
			rec := validatetest.File{Rows: tc.rows}.Record()
			defer rec.Release()
			rep := validate.Batch(rec, c, cfg)
			if diff := cmp.Diff(tc.counts, rep.Counts); diff != "" {
				t.Errorf("counts (-want +got):\n%s\nexamples %+v", diff, rep.Examples)
			}
			if rep.OK() != tc.ok {
				t.Errorf("OK() = %v, want %v", rep.OK(), tc.ok)
			}
			if rep.Rows != int64(len(tc.rows)) {
				t.Errorf("Rows = %d, want %d", rep.Rows, len(tc.rows))
			}
		})
	}
}

// TestFileRowNumbers checks that findings carry file-wide row numbers
// across row groups and batches, and that examples are capped while counts
// are not.
func TestFileRowNumbers(t *testing.T) {
	rows := validatetest.Points(50)
	for _, i := range []int{7, 23, 41} {
		rows[i].BBox = validatetest.Box(0, 0, 0, 0)
		rows[i].WKB = validatetest.Point(5, 5)
	}
	path := filepath.Join(t.TempDir(), "f.parquet")
	validatetest.Write(t, path, validatetest.File{Rows: rows, Geo: validatetest.Geo(""), RowGroupRows: 10})
	cfg := validate.DefaultConfig()
	cfg.BatchSize = 4
	cfg.MaxExamples = 2
	rep, err := validate.File(t.Context(), path, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Counts[validate.CodeBBoxMismatch] != 3 || rep.Rows != 50 {
		t.Fatalf("counts %v rows %d", rep.Counts, rep.Rows)
	}
	var got []int64
	for _, f := range rep.Examples {
		got = append(got, f.Row)
	}
	if diff := cmp.Diff([]int64{7, 23}, got); diff != "" {
		t.Errorf("example rows (-want +got):\n%s", diff)
	}
}

func TestFileMissingIsError(t *testing.T) {
	if _, err := validate.File(t.Context(), filepath.Join(t.TempDir(), "nope.parquet"), validate.DefaultConfig()); err == nil {
		t.Fatal("want an error for a missing file")
	}
}

func TestFileCRSFromHint(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plain.parquet")
	validatetest.Write(t, path, validatetest.File{Rows: validatetest.Points(3)})
	cfg := validate.DefaultConfig()
	cfg.Column = "geometry"
	rep, err := validate.File(t.Context(), path, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Counts[validate.CodeCRSMissing] != 1 || rep.Violations() != 1 {
		t.Fatalf("no metadata: counts %v", rep.Counts)
	}
	cfg.Props = map[string]string{spatial.PropCRS: "OGC:CRS84"}
	if rep, _ = validate.File(t.Context(), path, cfg); !rep.OK() {
		t.Fatalf("CRS from table property: %v", rep.Counts)
	}
}

// TestColumnReaderMatchesArrow validates the same rows through the
// column-reader path (bbox columns) and the Arrow path (a covering
// struct), across many pages, row groups and batches, with every kind of
// row defect sprinkled in: both must report the same counts and rows.
func TestColumnReaderMatchesArrow(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	rows := validatetest.Points(3000)
	for i := range rows {
		switch rng.IntN(40) {
		case 0:
			rows[i].WKB = nil
		case 1:
			rows[i].BBox = nil
		case 2:
			rows[i].BBox = validatetest.Box(0, 0, 1, 1)
		case 3:
			rows[i].WKB = rows[i].WKB[:10]
		case 4:
			rows[i].WKB = validatetest.Square(1, 1, 1)
			rows[i].BBox = validatetest.Box(1, 1, 2, 2)
		}
	}
	dir := t.TempDir()
	flat, covering := filepath.Join(dir, "flat.parquet"), filepath.Join(dir, "covering.parquet")
	validatetest.Write(t, flat, validatetest.File{Rows: rows, Geo: validatetest.Geo(""), RowGroupRows: 700, PageSize: 2048})
	validatetest.Write(t, covering, validatetest.File{Rows: rows, Covering: true, RowGroupRows: 700, PageSize: 2048,
		Geo: `{"version":"1.1.0","primary_column":"geometry","columns":{"geometry":{"encoding":"WKB","geometry_types":[],` +
			`"covering":{"bbox":{"xmin":["bbox","xmin"],"ymin":["bbox","ymin"],"xmax":["bbox","xmax"],"ymax":["bbox","ymax"]}}}}}`})
	cfg := validate.DefaultConfig()
	cfg.MaxExamples = 10000
	cfg.BatchSize = 333
	a, err := validate.File(t.Context(), flat, cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := validate.File(t.Context(), covering, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if a.Rows != 3000 || a.Violations() < 100 {
		t.Fatalf("rows %d, counts %v", a.Rows, a.Counts)
	}
	if diff := cmp.Diff(a.Counts, b.Counts); diff != "" {
		t.Errorf("counts (-columns +arrow):\n%s", diff)
	}
	rowsOf := func(r *validate.Report) []int64 {
		var out []int64
		for _, f := range r.Examples {
			out = append(out, f.Row)
		}
		return out
	}
	if diff := cmp.Diff(rowsOf(a), rowsOf(b)); diff != "" {
		t.Errorf("rows (-columns +arrow):\n%s", diff)
	}
}

// TestFileInvalidCRS checks that an unreadable CRS is reported once, with
// a huge value cut short and its size given, and that the bbox columns the
// file has are not reported missing because of it.
func TestFileInvalidCRS(t *testing.T) {
	for name, crs := range map[string]string{
		"huge string":       `"` + strings.Repeat("x", 10<<20) + `"`,
		"huge authority":    `"` + strings.Repeat("E ", 5<<20) + `:4326"`,
		"neither":           strings.Repeat("1", 10<<20),
		"short and invalid": `"WGS84"`,
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bad-crs.parquet")
			validatetest.Write(t, path, validatetest.File{Rows: validatetest.Points(3), Geo: validatetest.Geo(crs), Extra: true})
			rep, err := validate.File(t.Context(), path, validate.DefaultConfig())
			if err != nil {
				t.Fatal(err)
			}
			if rep.Counts[validate.CodeCRSMissing] != 1 {
				t.Fatalf("counts %v, want one %s", rep.Counts, validate.CodeCRSMissing)
			}
			if n := rep.Counts[validate.CodeBBoxMissing]; n != 0 {
				t.Errorf("%d %s findings for a file that has its bbox columns: %v", n, validate.CodeBBoxMissing, rep.Examples)
			}
			for _, f := range rep.Examples {
				if len(f.Detail) > 600 {
					t.Errorf("%s finding of %d bytes echoes the value: %.300s", f.Code, len(f.Detail), f.Detail)
				}
				if len(crs) > 1<<20 && f.Code == validate.CodeCRSMissing && !strings.Contains(f.Detail, " bytes)") {
					t.Errorf("finding does not give the value's size: %.300s", f.Detail)
				}
			}
		})
	}
}

// TestAntimeridianSaysWhatWasFound checks that a bbox.antimeridian warning
// names the values that raised it, what they mean for readers, and that
// it is only a warning.
func TestAntimeridianSaysWhatWasFound(t *testing.T) {
	cols := spatial.Columns{Geometry: "geometry", Encoding: spatial.EncodingWKB, CRS: "OGC:CRS84", BBox: spatial.BBoxColumns}
	line := func(x0, x1 float64) []byte { return validatetest.LE().Hdr(2).N(2).F(x0, 0, x1, 1).Buf }
	tests := []struct {
		name string
		row  validatetest.Row
		want []string
	}{
		{"inverted bbox", validatetest.Row{WKB: line(170, -170), BBox: validatetest.Box(170, 0, -170, 1)},
			[]string{"xmin 170 > xmax -170", "crosses the antimeridian", "empty", "whole world", "only a warning"}},
		{"wide geometry", validatetest.Row{WKB: line(-179, 179), BBox: validatetest.Box(-179, 0, 179, 1)},
			[]string{"-179 to 179", "more than 180°", "crosses the antimeridian", "only a warning"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := validatetest.File{Rows: []validatetest.Row{tc.row}}.Record()
			defer rec.Release()
			rep := validate.Batch(rec, cols, validate.DefaultConfig())
			require.Len(t, rep.Examples, 1)
			assert.Equal(t, validate.CodeAntimeridian, rep.Examples[0].Code)
			for _, s := range tc.want {
				assert.Contains(t, rep.Examples[0].Detail, s)
			}
		})
	}
}
