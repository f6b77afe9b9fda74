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

// ParseGeoMetadata parses the "geo" metadata document and checks that it is
// self-consistent: a 1.x version, a primary column listed in columns, and
// WKB encoding for every column (geocompact reads no other encoding).
// Errors wrap ErrGeoMetadata.
func ParseGeoMetadata(b []byte) (*GeoMetadata, error) {
	var m GeoMetadata
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrGeoMetadata, err)
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return &m, nil
}

// Validate checks the document on its own, without the file's schema.
func (m *GeoMetadata) Validate() error {
	if !strings.HasPrefix(m.Version, "1.") {
		return fmt.Errorf("%w: version %q, want 1.x", ErrGeoMetadata, m.Version)
	}
	if m.PrimaryColumn == "" {
		return fmt.Errorf("%w: primary_column is missing", ErrGeoMetadata)
	}
	if _, ok := m.Columns[m.PrimaryColumn]; !ok {
		return fmt.Errorf("%w: primary_column %q is not in columns", ErrGeoMetadata, m.PrimaryColumn)
	}
	for _, name := range slices.Sorted(maps.Keys(m.Columns)) {
		c := m.Columns[name]
		if !strings.EqualFold(c.Encoding, "WKB") {
			return fmt.Errorf("%w: column %q has encoding %q, want WKB", ErrGeoMetadata, name, c.Encoding)
		}
		for _, t := range c.GeometryTypes {
			if _, ok := ParseGeometryType(t); !ok {
				return fmt.Errorf("%w: column %q has geometry type %q", ErrGeoMetadata, name, t)
			}
		}
		if c.Covering != nil {
			for i, p := range c.Covering.BBox.Paths() {
				if len(p) != 2 || p[0] == "" || p[1] == "" {
					return fmt.Errorf("%w: column %q covering bbox %s is %q, want [column, field]", ErrGeoMetadata, name, coveringNames[i], p)
				}
				if p[0] != c.Covering.BBox.XMin[0] {
					return fmt.Errorf("%w: column %q covering bbox spans columns %q and %q", ErrGeoMetadata, name, c.Covering.BBox.XMin[0], p[0])
				}
			}
		}
	}
	return nil
}

var coveringNames = [4]string{"xmin", "ymin", "xmax", "ymax"}

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
		c.CRS, _ = json.Marshal(crs) // a string always marshals
	}
	return &GeoMetadata{Version: "1.1.0", PrimaryColumn: column, Columns: map[string]GeoColumn{column: c}}
}

// Marshal encodes m as the "geo" metadata value.
func (m *GeoMetadata) Marshal() ([]byte, error) { return json.Marshal(m) }
