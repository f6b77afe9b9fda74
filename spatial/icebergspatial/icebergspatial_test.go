package icebergspatial_test

import (
	"errors"
	"testing"

	"github.com/apache/iceberg-go"

	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/spatial/icebergspatial"
)

func TestColumns(t *testing.T) {
	g, _ := iceberg.GeometryTypeOf("srid:3857")
	v3 := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 2, Name: "shape", Type: g},
	)
	got, err := icebergspatial.Columns(v3, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if got.Geometry != "shape" || got.Encoding != spatial.EncodingIcebergGeometry || got.CRS != "EPSG:3857" {
		t.Errorf("v3: %+v", got)
	}
	v2 := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "geometry", Type: iceberg.PrimitiveTypes.Binary},
		iceberg.NestedField{ID: 2, Name: "bbox_minx", Type: iceberg.PrimitiveTypes.Float64},
	)
	got, err = icebergspatial.Columns(v2, map[string]string{spatial.PropGeometryColumn: "geometry"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if got.CRS != spatial.DefaultCRS || got.HasBBox() || got.BBox[0] != "bbox_minx" {
		t.Errorf("v2: %+v", got)
	}
	if _, err := icebergspatial.Columns(v2, nil, ""); !errors.Is(err, spatial.ErrGeometryColumn) {
		t.Errorf("no property: %v", err)
	}
}
