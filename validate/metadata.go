package validate

import (
	"encoding/json"
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
	hints := spatial.Hints{Column: cfg.Column, Props: cfg.Props}
	badGeo := false
	if geoJSON != "" {
		g, err := spatial.ParseGeoMetadata([]byte(geoJSON))
		if err != nil {
			r.Add(-1, CodeGeoMetadata, err.Error())
			badGeo = true
			if hints.Column == "" {
				// The rows can still be checked when the document names
				// its primary column.
				hints.Column = primaryColumn(geoJSON, sc)
			}
		} else {
			geo = g
		}
	}
	cols, err := spatial.DiscoverColumns(sc, geo, hints)
	for _, w := range cols.Warnings {
		r.Add(-1, w.Code, w.Error())
	}
	if err != nil {
		ce, isCE := errors.AsType[*spatial.ColumnError](err)
		switch {
		case !isCE:
			r.Add(-1, CodeColumn, err.Error())
			return cols, false
		case badGeo && ce.Code == CodeColumn && cols.Geometry == "":
			// The geo.metadata finding already says why no column was found.
			return cols, false
		}
		r.Add(-1, ce.Code, ce.Error())
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

// primaryColumn returns the primary_column a geo document names, if it is
// a column of sc, even when the document is otherwise unusable.
func primaryColumn(geoJSON string, sc *arrow.Schema) string {
	var m struct {
		PrimaryColumn string `json:"primary_column"`
	}
	if json.Unmarshal([]byte(geoJSON), &m) != nil || len(sc.FieldIndices(m.PrimaryColumn)) != 1 {
		return ""
	}
	return m.PrimaryColumn
}

// checkFileBBox warns when the file-level bbox the metadata declares does
// not contain the rows' extent (beyond cfg.Tolerance). The bbox is a hint
// for readers that prune files; the data are right, the hint is not.
func checkFileBBox(r *Report, cols spatial.Columns, cfg Config) {
	b := cols.FileBBox
	ext := r.data.Bound()
	if len(b) == 0 || ext.IsEmpty() {
		return
	}
	xmin, ymin, xmax, ymax := b[0], b[1], b[2], b[3]
	if len(b) == 6 {
		xmin, ymin, xmax, ymax = b[0], b[1], b[3], b[4]
	}
	tol := cfg.Tolerance
	xOK := xmin > xmax || (ext.MinX >= xmin-tol && ext.MaxX <= xmax+tol) // xmin > xmax: crosses the antimeridian
	if xOK && ext.MinY >= ymin-tol && ext.MaxY <= ymax+tol {
		return
	}
	r.Add(-1, CodeGeoBBox, fmt.Sprintf("column %q: the file bbox [%g, %g, %g, %g] does not contain the data's extent [%g, %g, %g, %g]: the bbox must cover every geometry; rewrite the metadata with the data's extent",
		cols.Geometry, xmin, ymin, xmax, ymax, ext.MinX, ext.MinY, ext.MaxX, ext.MaxY))
}

// checkCRS reports a missing CRS, or one that differs from cfg.CRS.
func checkCRS(r *Report, cols spatial.Columns, cfg Config) {
	switch {
	case cols.CRS == "" && cols.CRSSource == "null":
		r.Add(-1, CodeCRSMissing, fmt.Sprintf("column %q: crs is null (unknown)", cols.Geometry))
	case cols.CRS == "":
		r.Add(-1, CodeCRSMissing, fmt.Sprintf("column %q: no CRS in GeoParquet or GeoArrow metadata, nor a table property", cols.Geometry))
	case cfg.CRS != "" && cols.CRS != cfg.CRS:
		r.Add(-1, CodeCRSMismatch, fmt.Sprintf("data CRS %s (from %s) differs from the table CRS %s", spatial.Excerpt(cols.CRS), cols.CRSSource, spatial.Excerpt(cfg.CRS)))
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
			r.Add(-1, CodeBBoxMissing, fmt.Sprintf("bbox column %q has type %s, want double", name, f[0].Type))
		}
	}
	need := cfg.RequireBBox && cols.Encoding == spatial.EncodingWKB
	switch {
	case len(missing) == 4 && need:
		r.Add(-1, CodeBBoxMissing, "missing bbox columns: "+strings.Join(missing, ", ")+
			": geocompact ingest --add-bbox computes them from the WKB")
	case len(missing) > 0 && len(missing) < 4:
		// ingest --add-bbox fills in only a file that has none of them.
		r.Add(-1, CodeBBoxMissing, "missing bbox columns: "+strings.Join(missing, ", ")+
			": write all four, or none and let geocompact ingest --add-bbox compute them from the WKB")
	}
}
