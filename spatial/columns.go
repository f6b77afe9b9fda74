package spatial

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/geocompact/geocompact/internal/remedy"
)

// ErrGeometryColumn is the category of problems that leave no usable
// geometry column: none named, the named one absent, or of the wrong type.
var ErrGeometryColumn = errors.New("spatial: no usable geometry column")

// RemedyGeometryColumn: name the geometry column by a setting, the table
// property Name (PropGeometryColumn) or GeoParquet metadata.
var RemedyGeometryColumn = remedy.Define("spatial.geometry-column", func(a remedy.Advice) string {
	return "name one with the geometry column setting, the table property " + a.Name + " or GeoParquet metadata"
})

// ColumnError reports a problem with a file's or table's geometry columns.
// Code is the stable check code (geometry.column, geo.metadata, ...).
type ColumnError struct {
	Column string
	Code   string
	Reason string
	// Advice is what to do when Reason does not say it: its words follow
	// Reason after ": ". Most ColumnErrors have none.
	Advice remedy.Advice
	err    error
}

var _ remedy.Carrier = (*ColumnError)(nil)

// Error implements error.
func (e *ColumnError) Error() string { return e.Say(remedy.Library) }

// Remedy returns Advice.
func (e *ColumnError) Remedy() remedy.Advice { return e.Advice }

// Say returns the message with Advice worded by w.
func (e *ColumnError) Say(w remedy.Wording) string {
	msg := e.Reason
	if s := w(e.Advice); s != "" {
		msg += ": " + s
	}
	if e.Column == "" {
		return msg
	}
	return fmt.Sprintf("column %q: %s", e.Column, msg)
}

// NewColumnError returns a ColumnError of category err (ErrGeometryColumn
// or ErrGeoMetadata).
func NewColumnError(column, code, reason string, err error) *ColumnError {
	return &ColumnError{Column: column, Code: code, Reason: reason, err: err}
}

// Unwrap returns the category: ErrGeometryColumn or ErrGeoMetadata.
func (e *ColumnError) Unwrap() error { return e.err }

// DefaultGeometryColumn names the geometry column of a table geocompact
// creates when its data names none.
const DefaultGeometryColumn = "geometry"

// GeoArrowWKB is the Arrow extension name of WKB geometry, which iceberg-go
// uses for the Iceberg v3 geometry type.
const GeoArrowWKB = "geoarrow.wkb"

// Columns says where a file's or table's geometry lives.
type Columns struct {
	// Geometry is the primary geometry column.
	Geometry string
	// Encoding is EncodingWKB for a binary column, EncodingIcebergGeometry
	// for a geoarrow.wkb extension column or an Iceberg v3 geometry field.
	// Both hold WKB values.
	Encoding string
	// CRS is the geometry's canonical CRS, or "" when the source does not
	// say (no GeoParquet, GeoArrow or Iceberg metadata) or says "unknown"
	// (a JSON null); CRSSource then tells which.
	CRS string
	// CRSSource names where CRS came from: "geo metadata", "geoarrow
	// metadata", "iceberg type", "table property", "null" (explicitly
	// unknown) or "" (nowhere).
	CRSSource string
	// GeometryTypes lists the allowed types the metadata declares, if any.
	GeometryTypes []string
	// BBox holds the names of the bbox columns found, in BBoxColumns
	// order; a missing one is "".
	BBox [4]string
	// Covering is the GeoParquet 1.1 covering struct column, if declared,
	// and CoveringFields its xmin, ymin, xmax, ymax fields.
	Covering       string
	CoveringFields [4]string
	// FileBBox is the file-level bbox the GeoParquet metadata declares
	// (4 or 6 numbers), if any.
	FileBBox []float64
	// Warnings are malformed optional hints found in the metadata.
	Warnings []GeoWarning
}

// HasBBox reports whether all four bbox columns are present.
func (c Columns) HasBBox() bool {
	return c.BBox[0] != "" && c.BBox[1] != "" && c.BBox[2] != "" && c.BBox[3] != ""
}

// Hints are what a caller knows about a geometry column beyond the data:
// an explicit column name (a flag) and table properties.
type Hints struct {
	Column string
	Props  map[string]string
}

// DiscoverColumns finds the geometry column of a file with Arrow schema sc
// and GeoParquet metadata geo (nil when the file has none). The column is
// the one named by hints.Column, else the table property
// PropGeometryColumn, else geo's primary_column, else the first geoarrow.wkb
// extension field. It must be binary (WKB); a string column (WKT) is
// refused with that reason. The CRS comes from geo, else the field's
// GeoArrow metadata, else the table property PropCRS.
//
// geo must agree with sc: every column it lists must exist. Errors are
// *ColumnError values wrapping ErrGeometryColumn or ErrGeoMetadata; an
// unreadable CRS (code crs.missing) still returns the columns found,
// bbox columns included, so the rows can be checked.
func DiscoverColumns(sc *arrow.Schema, geo *GeoMetadata, hints Hints) (Columns, error) {
	var c Columns
	if geo != nil {
		for name := range geo.Columns {
			if len(sc.FieldIndices(name)) == 0 {
				return c, &ColumnError{Column: name, Code: "geo.metadata", Reason: "listed in the geo metadata but not in the file: every column the geo metadata lists must exist; drop it from columns or add the column", err: ErrGeoMetadata}
			}
		}
	}
	c.Geometry = hints.Column
	if c.Geometry == "" {
		c.Geometry = hints.Props[PropGeometryColumn]
	}
	if c.Geometry == "" && geo != nil {
		c.Geometry = geo.PrimaryColumn
	}
	if c.Geometry == "" {
		for _, f := range sc.Fields() {
			if isGeoArrowWKB(f) {
				c.Geometry = f.Name
				break
			}
		}
	}
	if c.Geometry == "" {
		return c, &ColumnError{Code: "geometry.column", Reason: "no geometry column",
			Advice: remedy.Advice{Kind: RemedyGeometryColumn, Name: PropGeometryColumn}, err: ErrGeometryColumn}
	}
	idx := sc.FieldIndices(c.Geometry)
	if len(idx) != 1 {
		return c, &ColumnError{Column: c.Geometry, Code: "geometry.column", Reason: "geometry column is not in the file", err: ErrGeometryColumn}
	}
	f := sc.Field(idx[0])
	enc, err := geometryEncoding(f)
	if err != nil {
		return c, err
	}
	c.Encoding = enc
	err = c.discoverCRS(f, geo, hints.Props)
	c.discoverBBox(sc, geo) // the rows stay checkable without a CRS
	return c, err
}

// geometryEncoding checks that f holds WKB.
func geometryEncoding(f arrow.Field) (string, error) {
	if isGeoArrowWKB(f) {
		return EncodingIcebergGeometry, nil
	}
	switch f.Type.ID() {
	case arrow.BINARY, arrow.LARGE_BINARY, arrow.BINARY_VIEW:
		return EncodingWKB, nil
	case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
		return "", &ColumnError{Column: f.Name, Code: "geometry.column", Reason: "geometry column is a string column (WKT or GeoJSON?); want WKB binary", err: ErrGeometryColumn}
	}
	return "", &ColumnError{Column: f.Name, Code: "geometry.column", Reason: fmt.Sprintf("geometry column has type %s; want WKB binary", f.Type), err: ErrGeometryColumn}
}

func isGeoArrowWKB(f arrow.Field) bool {
	if et, ok := f.Type.(arrow.ExtensionType); ok && et.ExtensionName() == GeoArrowWKB {
		return true
	}
	name, _ := f.Metadata.GetValue("ARROW:extension:name")
	return name == GeoArrowWKB
}

// geoArrowCRS returns the raw "crs" member of f's GeoArrow extension
// metadata, or nil.
func geoArrowCRS(f arrow.Field) json.RawMessage {
	var meta string
	if et, ok := f.Type.(arrow.ExtensionType); ok && et.ExtensionName() == GeoArrowWKB {
		meta = et.Serialize()
	} else if v, ok := f.Metadata.GetValue("ARROW:extension:metadata"); ok {
		meta = v
	}
	if meta == "" {
		return nil
	}
	var m struct {
		CRS json.RawMessage `json:"crs"`
	}
	if json.Unmarshal([]byte(meta), &m) != nil {
		return nil
	}
	return m.CRS
}

func (c *Columns) discoverCRS(f arrow.Field, geo *GeoMetadata, props map[string]string) error {
	var gc *GeoColumn
	if geo != nil {
		if col, ok := geo.Columns[c.Geometry]; ok {
			gc = &col
			c.GeometryTypes = col.GeometryTypes
		}
	}
	var (
		crs string
		err error
	)
	switch raw := geoArrowCRS(f); {
	case gc != nil:
		crs, err = gc.CRSName()
		c.CRSSource = "geo metadata"
	case len(raw) > 0:
		crs, err = ParseGeoParquetCRS(raw)
		c.CRSSource = "geoarrow metadata"
	case props[PropCRS] != "":
		crs, err = NormalizeCRS(props[PropCRS])
		c.CRSSource = "table property"
	}
	if errors.Is(err, ErrUnknownCRS) {
		c.CRSSource = "null"
		return nil
	}
	if err != nil {
		reason := err.Error()
		if c.CRSSource == "geo metadata" {
			reason += ": GeoParquet wants a PROJJSON object (or null, or omitted for OGC:CRS84); rewrite the crs member"
		}
		return &ColumnError{Column: c.Geometry, Code: "crs.missing", Reason: reason, err: err}
	}
	c.CRS = crs
	return nil
}

func (c *Columns) discoverBBox(sc *arrow.Schema, geo *GeoMetadata) {
	for i, name := range BBoxColumns {
		if len(sc.FieldIndices(name)) == 1 {
			c.BBox[i] = name
		}
	}
	if geo == nil {
		return
	}
	gc, ok := geo.Columns[c.Geometry]
	if !ok {
		return
	}
	c.FileBBox = gc.BBox
	if n := len(gc.BBox); n != 0 && n != 4 && n != 6 {
		c.warn(GeoCodeBBox, fmt.Sprintf("bbox has %d numbers: GeoParquet wants [xmin, ymin, xmax, ymax] (or 6 with z); it is ignored, fix or drop it", n))
		c.FileBBox = nil
	}
	if gc.Covering == nil {
		return
	}
	paths := gc.Covering.BBox.Paths()
	switch gc.Covering.BBox.form() {
	case coveringStruct:
		c.Covering = paths[0][0]
		for i, p := range paths {
			c.CoveringFields[i] = p[1]
		}
	case coveringFlat:
		var names [4]string
		for i, p := range paths {
			names[i] = p[0]
			if f, ok := sc.FieldsByName(p[0]); !ok || len(f) != 1 || f[0].Type.ID() != arrow.FLOAT64 {
				c.warn(GeoCodeCovering, fmt.Sprintf("covering bbox %s names %q, which is not a double column of the file; the covering is ignored: point it at the file's bbox columns", coveringNames[i], p[0]))
				return
			}
		}
		c.BBox = names
		c.warn(GeoCodeCoveringFlat, fmt.Sprintf("covering bbox paths are flat column names %q; GeoParquet 1.1 wants [struct column, field] paths such as [\"bbox\", \"xmin\"]; read as the bbox columns they name: rewrite the metadata in the 1.1 form", names))
	default:
		c.warn(GeoCodeCovering, fmt.Sprintf("covering bbox paths %q are not [struct column, field] paths into one struct column, as GeoParquet 1.1 requires; the covering is ignored: fix or drop it", paths))
	}
}

func (c *Columns) warn(code, reason string) {
	c.Warnings = append(c.Warnings, GeoWarning{Code: code, Column: c.Geometry, Reason: reason})
}
