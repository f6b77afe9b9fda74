package spatial

import (
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/google/go-cmp/cmp"
)

func bboxFields() []arrow.Field {
	var fs []arrow.Field
	for _, n := range BBoxColumns {
		fs = append(fs, arrow.Field{Name: n, Type: arrow.PrimitiveTypes.Float64})
	}
	return fs
}

func TestDiscoverColumns(t *testing.T) {
	wkbSchema := arrow.NewSchema(append([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "geom", Type: arrow.BinaryTypes.Binary}}, bboxFields()...), nil)
	geo := NewGeoMetadata("geom", "EPSG:3857", []string{"Point"})
	tests := []struct {
		name  string
		sc    *arrow.Schema
		geo   *GeoMetadata
		hints Hints
		want  Columns
		code  string
	}{
		{
			name: "from geo metadata", sc: wkbSchema, geo: geo,
			want: Columns{Geometry: "geom", Encoding: EncodingWKB, CRS: "EPSG:3857", CRSSource: "geo metadata", GeometryTypes: []string{"Point"}, BBox: BBoxColumns},
		},
		{
			name: "from table property", sc: wkbSchema,
			hints: Hints{Props: map[string]string{PropGeometryColumn: "geom", PropCRS: "epsg:4326"}},
			want:  Columns{Geometry: "geom", Encoding: EncodingWKB, CRS: "EPSG:4326", CRSSource: "table property", BBox: BBoxColumns},
		},
		{
			name: "no metadata: CRS unknown", sc: wkbSchema, hints: Hints{Column: "geom"},
			want: Columns{Geometry: "geom", Encoding: EncodingWKB, BBox: BBoxColumns},
		},
		{name: "nothing names it", sc: wkbSchema, code: "geometry.column"},
		{name: "absent", sc: wkbSchema, hints: Hints{Column: "shape"}, code: "geometry.column"},
		{
			name:  "string column refused",
			sc:    arrow.NewSchema([]arrow.Field{{Name: "wkt", Type: arrow.BinaryTypes.String}}, nil),
			hints: Hints{Column: "wkt"}, code: "geometry.column",
		},
		{
			name: "geo lists a column the file lacks", sc: wkbSchema,
			geo: NewGeoMetadata("shape", DefaultCRS, nil), code: "geo.metadata",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DiscoverColumns(tc.sc, tc.geo, tc.hints)
			if tc.code != "" {
				ce, ok := errors.AsType[*ColumnError](err)
				if !ok || ce.Code != tc.code {
					t.Fatalf("got %v, want code %s", err, tc.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestDiscoverColumnsGeoArrowCRS(t *testing.T) {
	md := arrow.NewMetadata(
		[]string{"ARROW:extension:name", "ARROW:extension:metadata"},
		[]string{GeoArrowWKB, `{"crs":{"type":"ProjectedCRS","id":{"authority":"EPSG","code":3857}},"crs_type":"projjson"}`},
	)
	sc := arrow.NewSchema([]arrow.Field{{Name: "shape", Type: arrow.BinaryTypes.Binary, Metadata: md}}, nil)
	got, err := DiscoverColumns(sc, nil, Hints{})
	if err != nil {
		t.Fatal(err)
	}
	want := Columns{Geometry: "shape", Encoding: EncodingIcebergGeometry, CRS: "EPSG:3857", CRSSource: "geoarrow metadata"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
