package spatial

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// GeoParquetKey is the Parquet key-value metadata key that holds the
// GeoParquet "geo" JSON document.
const GeoParquetKey = "geo"

// ErrGeoMetadata is the category of malformed or inconsistent GeoParquet
// metadata.
var ErrGeoMetadata = errors.New("spatial: invalid GeoParquet metadata")

// GeoMetadata is the GeoParquet "geo" file metadata (versions 1.0 and 1.1).
type GeoMetadata struct {
	Version       string               `json:"version"`
	PrimaryColumn string               `json:"primary_column"`
	Columns       map[string]GeoColumn `json:"columns"`
}

// GeoColumn describes one geometry column of a GeoParquet file.
type GeoColumn struct {
	Encoding      string   `json:"encoding"`
	GeometryTypes []string `json:"geometry_types"`
	// CRS is the raw "crs" member: nil when omitted (meaning OGC:CRS84),
	// the JSON text null when explicitly unknown. Read it with CRSName.
	CRS         json.RawMessage `json:"crs,omitempty"`
	Orientation string          `json:"orientation,omitempty"`
	Edges       string          `json:"edges,omitempty"`
	BBox        []float64       `json:"bbox,omitempty"`
	Epoch       *float64        `json:"epoch,omitempty"`
	Covering    *Covering       `json:"covering,omitempty"`
}

// Covering is the GeoParquet 1.1 covering member: columns that hold a
// per-row bounding box for the geometry.
type Covering struct {
	BBox CoveringBBox `json:"bbox"`
}

// CoveringBBox names the four covering columns, each as a path
// [struct column, field], e.g. ["bbox", "xmin"].
type CoveringBBox struct {
	XMin []string `json:"xmin"`
	YMin []string `json:"ymin"`
	XMax []string `json:"xmax"`
	YMax []string `json:"ymax"`
}

// Paths returns the four covering paths in xmin, ymin, xmax, ymax order.
func (c CoveringBBox) Paths() [4][]string { return [4][]string{c.XMin, c.YMin, c.XMax, c.YMax} }

// ParseGeoMetadata parses the "geo" metadata document and checks its
// required members: a 1.x version, a primary column listed in columns, and
// WKB encoding for every column (geocompact reads no other encoding).
// Optional hints (covering, bbox) are not checked here: a malformed hint
// is a GeoWarning from Hints, never a refusal of the file. Errors wrap
// ErrGeoMetadata and state the rule broken and how to fix it.
func ParseGeoMetadata(b []byte) (*GeoMetadata, error) {
	var m GeoMetadata
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%w: the geo key must hold a JSON object with version, primary_column and columns (%v); rewrite the file's metadata with a GeoParquet writer", ErrGeoMetadata, err)
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return &m, nil
}

// Validate checks the document's required members on their own, without
// the file's schema.
func (m *GeoMetadata) Validate() error {
	if !strings.HasPrefix(m.Version, "1.") {
		return fmt.Errorf("%w: version %q: geocompact reads GeoParquet 1.x; write the file with a GeoParquet 1.0 or 1.1 writer", ErrGeoMetadata, m.Version)
	}
	if m.PrimaryColumn == "" {
		return fmt.Errorf("%w: primary_column is missing: GeoParquet requires it; set it to the geometry column's name", ErrGeoMetadata)
	}
	if _, ok := m.Columns[m.PrimaryColumn]; !ok {
		return fmt.Errorf("%w: primary_column %q is not in columns: every primary column needs an entry there; add it or fix the name", ErrGeoMetadata, m.PrimaryColumn)
	}
	for _, name := range slices.Sorted(maps.Keys(m.Columns)) {
		c := m.Columns[name]
		if !strings.EqualFold(c.Encoding, "WKB") {
			return fmt.Errorf("%w: column %q has encoding %q: geocompact reads WKB only; convert the column to WKB", ErrGeoMetadata, name, c.Encoding)
		}
		for _, t := range c.GeometryTypes {
			if _, ok := ParseGeometryType(t); !ok {
				return fmt.Errorf("%w: column %q has geometry type %q: types are OGC names such as \"Point\" or \"Polygon Z\"; fix or empty geometry_types", ErrGeoMetadata, name, t)
			}
		}
	}
	return nil
}

var coveringNames = [4]string{"xmin", "ymin", "xmax", "ymax"}

// Warning codes for malformed optional GeoParquet hints. The data stays
// readable; validate reports them as warnings (violations with --strict).
const (
	// GeoCodeCoveringFlat: covering bbox paths are flat column names
	// (["bbox_minx"]) instead of the 1.1 [struct column, field] form.
	GeoCodeCoveringFlat = "geo.covering-flat"
	// GeoCodeCovering: a covering that cannot be used and is ignored.
	GeoCodeCovering = "geo.covering"
	// GeoCodeBBox: the file-level bbox is malformed or does not contain
	// the data.
	GeoCodeBBox = "geo.bbox"
)

// GeoWarning is a malformed optional hint in GeoParquet metadata: reported,
// not fatal. Reason states the rule and the fix.
type GeoWarning struct {
	Code   string
	Column string
	Reason string
}

// Error implements error, so a warning can be reported like a finding.
func (w GeoWarning) Error() string { return fmt.Sprintf("column %q: %s", w.Column, w.Reason) }

// coveringForm is how a column's covering names its four bbox columns.
type coveringForm int

const (
	coveringStruct  coveringForm = iota // 1.1 form: [struct, field], one struct
	coveringFlat                        // four top-level column names
	coveringInvalid                     // anything else
)

// form classifies the covering's paths.
func (c CoveringBBox) form() coveringForm {
	paths := c.Paths()
	flat, nested := 0, 0
	for _, p := range paths {
		switch {
		case len(p) == 1 && p[0] != "":
			flat++
		case len(p) == 2 && p[0] != "" && p[1] != "" && p[0] == paths[0][0]:
			nested++
		}
	}
	switch {
	case nested == 4:
		return coveringStruct
	case flat == 4:
		return coveringFlat
	}
	return coveringInvalid
}

// CRSName returns the column's canonical CRS: OGC:CRS84 when omitted,
// ErrUnknownCRS when null.
func (c GeoColumn) CRSName() (string, error) { return ParseGeoParquetCRS(c.CRS) }

// NewGeoMetadata returns a GeoParquet 1.1 document for a single WKB column.
// crs is a canonical CRS; OGC:CRS84 is written by omitting the member, as
// the specification recommends.
func NewGeoMetadata(column, crs string, types []string) *GeoMetadata {
	c := GeoColumn{Encoding: "WKB", GeometryTypes: types}
	if types == nil {
		c.GeometryTypes = []string{}
	}
	if crs != DefaultCRS && crs != "" {
		c.CRS = PROJJSON(crs)
	}
	return &GeoMetadata{Version: "1.1.0", PrimaryColumn: column, Columns: map[string]GeoColumn{column: c}}
}

// Marshal encodes m as the "geo" metadata value.
func (m *GeoMetadata) Marshal() ([]byte, error) { return json.Marshal(m) }
