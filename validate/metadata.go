package validate

import (
	"errors"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/geocompact/geocompact/spatial"
)

// resolveColumns resolves and checks a file's geometry metadata: the GeoParquet
// "geo" document (geoJSON, empty when the file has none), the geometry
// column, its CRS and the bbox or covering columns. Findings go to r with
// row -1. ok is false when no row can be checked (no usable geometry
// column).
func resolveColumns(r *Report, sc *arrow.Schema, geoJSON string, cfg Config) (cols spatial.Columns, ok bool) {
	var geo *spatial.GeoMetadata
	if geoJSON != "" {
		g, err := spatial.ParseGeoMetadata([]byte(geoJSON))
		if err != nil {
			r.add(-1, CodeGeoMetadata, err.Error())
		} else {
			geo = g
		}
	}
	cols, err := spatial.DiscoverColumns(sc, geo, spatial.Hints{Column: cfg.Column, Props: cfg.Props})
	if err != nil {
		ce, isCE := errors.AsType[*spatial.ColumnError](err)
		if !isCE {
			r.add(-1, CodeColumn, err.Error())
			return cols, false
		}
		r.add(-1, ce.Code, ce.Error())
		if ce.Code != CodeCRSMissing {
			return cols, false
		}
		// An unreadable CRS leaves the rows checkable.
	} else {
		checkCRS(r, cols, cfg)
	}
	checkBBoxSchema(r, sc, cols, cfg)
	return cols, true
}

// checkCRS reports a missing CRS, or one that differs from cfg.CRS.
func checkCRS(r *Report, cols spatial.Columns, cfg Config) {
	switch {
	case cols.CRS == "" && cols.CRSSource == "null":
		r.add(-1, CodeCRSMissing, fmt.Sprintf("column %q: crs is null (unknown)", cols.Geometry))
	case cols.CRS == "":
		r.add(-1, CodeCRSMissing, fmt.Sprintf("column %q: no CRS in GeoParquet or GeoArrow metadata, nor a table property", cols.Geometry))
	case cfg.CRS != "" && cols.CRS != cfg.CRS:
		r.add(-1, CodeCRSMismatch, fmt.Sprintf("data CRS %s (from %s) differs from the table CRS %s", cols.CRS, cols.CRSSource, cfg.CRS))
	}
}

// checkBBoxSchema reports absent or non-double bbox columns. Iceberg v3
// geometry needs none; WKB needs all four, or a covering, when
// cfg.RequireBBox is set.
func checkBBoxSchema(r *Report, sc *arrow.Schema, cols spatial.Columns, cfg Config) {
	if cols.Covering != "" {
		return // checked per batch, where the struct's fields are known
	}
	var missing []string
	for i, name := range spatial.BBoxColumns {
		if cols.BBox[i] == "" {
			missing = append(missing, name)
			continue
		}
		f, _ := sc.FieldsByName(name)
		if len(f) == 1 && f[0].Type.ID() != arrow.FLOAT64 {
			r.add(-1, CodeBBoxMissing, fmt.Sprintf("bbox column %q has type %s, want double", name, f[0].Type))
		}
	}
	need := cfg.RequireBBox && cols.Encoding == spatial.EncodingWKB
	if len(missing) > 0 && (need || len(missing) < 4) {
		r.add(-1, CodeBBoxMissing, "missing bbox columns: "+strings.Join(missing, ", "))
	}
}
