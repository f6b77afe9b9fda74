package validatetest

import (
	"math"
	"os"
	"path/filepath"
	"testing"
)

// Fixture is one committed test file: its name under testdata/geoparquet
// says what it must produce. "ok-…" files validate clean against the
// expected CRS OGC:CRS84; "bad-<code>[_what]" files produce at least one
// finding with that code.
type Fixture struct {
	Name string
	File File
	// Raw, when set, is written as the file's bytes instead of Parquet
	// (for corrupt-file fixtures). RawFrom names another fixture whose
	// bytes are truncated to half instead.
	Raw     []byte
	RawFrom string
}

// Fixtures returns the committed GeoParquet fixtures.
func Fixtures() []Fixture {
	crs84 := `{"type":"GeographicCRS","name":"WGS 84 (CRS84)","id":{"authority":"OGC","code":"CRS84"}}`
	pts := Points(8)
	poly := []Row{
		{WKB: Square(0, 0, 1), BBox: Box(0, 0, 1, 1)},
		{WKB: Square(-10, 5, 2.5), BBox: Box(-10, 5, -7.5, 7.5)},
	}
	with := func(i int, r Row) []Row {
		rows := append([]Row(nil), pts...)
		rows[i] = r
		return rows
	}
	beRows := []Row{
		{WKB: BE().Hdr(1).F(1.5, -2).Buf, BBox: Box(1.5, -2, 1.5, -2)},
		{WKB: BE().Hdr(3).N(1).N(4).F(0, 0, 2, 0, 0, 2, 0, 0).Buf, BBox: Box(0, 0, 2, 2)},
	}
	covering := `{"version":"1.1.0","primary_column":"geometry","columns":{"geometry":{"encoding":"WKB","geometry_types":["Point"],` +
		`"covering":{"bbox":{"xmin":["bbox","xmin"],"ymin":["bbox","ymin"],"xmax":["bbox","xmax"],"ymax":["bbox","ymax"]}}}}}`
	return []Fixture{
		{Name: "ok-points-projjson-crs", File: File{Rows: pts, Geo: Geo(crs84), Extra: true}},
		{Name: "ok-omitted-crs", File: File{Rows: pts, Geo: Geo("")}},
		{Name: "ok-big-endian", File: File{Rows: beRows, Geo: Geo("")}},
		{Name: "ok-polygons", File: File{Rows: poly, Geo: Geo(`"OGC:CRS84"`)}},
		{Name: "ok-bbox-within-tolerance", File: File{Rows: []Row{{WKB: Point(10, 20), BBox: Box(10-5e-7, 20, 10, 20+5e-7)}}, Geo: Geo("")}},
		{Name: "ok-zero-rows", File: File{Geo: Geo("")}},
		{Name: "ok-covering-other-layout", File: File{Rows: Points(10), Geo: covering, Covering: true, RowGroupRows: 3, OtherLayout: true}},
		{Name: "ok-empty-point", File: File{Rows: []Row{{WKB: Point(math.NaN(), math.NaN()), BBox: Box(math.NaN(), math.NaN(), math.NaN(), math.NaN())}}, Geo: Geo("")}},
		{Name: "ok-antimeridian-warning", File: File{Rows: []Row{{WKB: LE().Hdr(2).N(2).F(170, 0, -170, 1).Buf, BBox: Box(170, 0, -170, 1)}}, Geo: Geo("")}},
		{Name: "bad-wkb.truncated", File: File{Rows: with(3, Row{WKB: LE().Hdr(2).N(1 << 27).Buf, BBox: Box(0, 0, 0, 0)}), Geo: Geo("")}},
		{Name: "bad-wkb.type", File: File{Rows: with(1, Row{WKB: LE().Hdr(17).F(0, 0).Buf, BBox: Box(0, 0, 0, 0)}), Geo: Geo("")}},
		{Name: "bad-wkb.type_not-declared", File: File{Rows: poly, Geo: `{"version":"1.0.0","primary_column":"geometry","columns":{"geometry":{"encoding":"WKB","geometry_types":["Point"]}}}`}},
		{Name: "bad-wkb.nonfinite", File: File{Rows: with(0, Row{WKB: Point(math.Inf(1), 0), BBox: Box(0, 0, 0, 0)}), Geo: Geo("")}},
		{Name: "bad-wkb.ring-open", File: File{Rows: []Row{{WKB: LE().Hdr(3).N(1).N(4).F(0, 0, 1, 0, 1, 1, 0, 1).Buf, BBox: Box(0, 0, 1, 1)}}, Geo: Geo("")}},
		{Name: "bad-wkb.ring-short", File: File{Rows: []Row{{WKB: LE().Hdr(3).N(1).N(3).F(0, 0, 1, 0, 0, 0).Buf, BBox: Box(0, 0, 1, 0)}}, Geo: Geo("")}},
		{Name: "bad-wkb.trailing", File: File{Rows: with(7, Row{WKB: append(Point(1, 1), 0), BBox: Box(1, 1, 1, 1)}), Geo: Geo("")}},
		{Name: "bad-crs.missing_null", File: File{Rows: pts, Geo: Geo("null")}},
		{Name: "bad-geometry.column_no-metadata", File: File{Rows: pts}},
		{Name: "bad-crs.mismatch_3857", File: File{Rows: pts, Geo: Geo(`{"id":{"authority":"EPSG","code":3857}}`)}},
		{Name: "bad-crs.mismatch_epsg4326-axis-order", File: File{Rows: pts, Geo: Geo(`"EPSG:4326"`)}},
		{Name: "bad-geo.metadata_json", File: File{Rows: pts, Geo: `{"version":`}},
		{Name: "bad-geo.metadata_encoding", File: File{Rows: pts, Geo: `{"version":"1.0.0","primary_column":"geometry","columns":{"geometry":{"encoding":"point","geometry_types":[]}}}`}},
		{Name: "bad-geo.metadata_column", File: File{Rows: pts, Geo: `{"version":"1.0.0","primary_column":"geom","columns":{"geom":{"encoding":"WKB","geometry_types":[]}}}`}},
		{Name: "bad-bbox.missing", File: File{Rows: pts, Geo: Geo(""), NoBBox: true}},
		{Name: "bad-bbox.missing_null", File: File{Rows: with(2, Row{WKB: Point(1, 1)}), Geo: Geo("")}},
		{Name: "bad-bbox.mismatch", File: File{Rows: with(5, Row{WKB: Point(1, 1), BBox: Box(1, 1, 1.001, 1)}), Geo: Geo("")}},
		{Name: "bad-bbox.mismatch_covering", File: File{Rows: []Row{{WKB: Point(3, 4), BBox: Box(3, 4, 3, 5)}}, Geo: covering, Covering: true}},
		{Name: "bad-geometry.null", File: File{Rows: with(4, Row{BBox: Box(0, 0, 0, 0)}), Geo: Geo("")}},
		{Name: "bad-geometry.column_wkt-string", File: File{Rows: []Row{{WKB: []byte("POINT (1 2)"), BBox: Box(1, 2, 1, 2)}}, Geo: Geo(""), WKT: true}},
		{Name: "bad-file.corrupt_empty", Raw: []byte{}},
		{Name: "bad-file.corrupt_not-parquet", Raw: []byte("id,geometry\n1,POINT (1 2)\n")},
		{Name: "bad-file.corrupt_truncated", RawFrom: "ok-points-projjson-crs"},
	}
}

// WriteFixtures writes every fixture into dir as NAME.parquet.
func WriteFixtures(t testing.TB, dir string) {
	t.Helper()
	byName := map[string]string{}
	for _, fx := range Fixtures() {
		path := filepath.Join(dir, fx.Name+".parquet")
		byName[fx.Name] = path
		switch {
		case fx.Raw != nil:
			if err := os.WriteFile(path, fx.Raw, 0o644); err != nil {
				t.Fatal(err)
			}
		case fx.RawFrom != "":
			b, err := os.ReadFile(byName[fx.RawFrom])
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, b[:len(b)/2], 0o644); err != nil {
				t.Fatal(err)
			}
		default:
			Write(t, path, fx.File)
		}
	}
}
