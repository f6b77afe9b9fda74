package spatial

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNormalizeCRS(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"EPSG:3857", "EPSG:3857"},
		{"epsg:3857", "EPSG:3857"},
		{" EPSG:4326 ", "EPSG:4326"},
		{"srid:3857", "EPSG:3857"},
		{"OGC:CRS84", "OGC:CRS84"},
		{"ogc:crs84", "OGC:CRS84"},
		{"urn:ogc:def:crs:EPSG::3857", "EPSG:3857"},
		{"urn:ogc:def:crs:OGC:1.3:CRS84", "OGC:CRS84"},
		{"http://www.opengis.net/def/crs/OGC/1.3/CRS84", "OGC:CRS84"},
		{"http://www.opengis.net/def/crs/EPSG/0/32633", "EPSG:32633"},
		{`{"type":"ProjectedCRS","name":"WGS 84 / Pseudo-Mercator","id":{"authority":"EPSG","code":3857}}`, "EPSG:3857"},
		{`{"type":"GeographicCRS","name":"WGS 84 (CRS84)","id":{"authority":"OGC","code":"CRS84"}}`, "OGC:CRS84"},
		{`{"type":"GeographicCRS","ids":[{"authority":"EPSG","code":4326}]}`, "EPSG:4326"},
		{`{"type": "GeographicCRS", "name": "custom"}`, `PROJJSON:{"type":"GeographicCRS","name":"custom"}`},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := NormalizeCRS(tc.in)
			if err != nil || got != tc.want {
				t.Fatalf("NormalizeCRS = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestNormalizeCRSKeepsAxisOrderApart(t *testing.T) {
	a, _ := NormalizeCRS("EPSG:4326")
	b, _ := NormalizeCRS("OGC:CRS84")
	if a == b {
		t.Fatalf("EPSG:4326 and OGC:CRS84 normalise to the same %q, but differ in axis order", a)
	}
}

func TestNormalizeCRSErrors(t *testing.T) {
	for _, in := range []string{"", "WGS84", "EPSG:", ":4326", "{not json", "urn:ogc:def:crs:x"} {
		if got, err := NormalizeCRS(in); !errors.Is(err, ErrCRS) {
			t.Errorf("NormalizeCRS(%q) = %q, %v; want ErrCRS", in, got, err)
		}
	}
}

func TestParseGeoParquetCRS(t *testing.T) {
	tests := []struct {
		name    string
		raw     json.RawMessage
		want    string
		unknown bool
	}{
		{"omitted means CRS84", nil, "OGC:CRS84", false},
		{"null means unknown", json.RawMessage("null"), "", true},
		{"string", json.RawMessage(`"EPSG:3857"`), "EPSG:3857", false},
		{"projjson", json.RawMessage(`{"id":{"authority":"EPSG","code":3857}}`), "EPSG:3857", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseGeoParquetCRS(tc.raw)
			if tc.unknown {
				if !errors.Is(err, ErrUnknownCRS) {
					t.Fatalf("got %q, %v; want ErrUnknownCRS", got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	if _, err := ParseGeoParquetCRS(json.RawMessage("42")); !errors.Is(err, ErrCRS) {
		t.Errorf("a number: %v, want ErrCRS", err)
	}
}

func TestGeoMetadataNullVersusOmittedCRS(t *testing.T) {
	omitted, err := ParseGeoMetadata([]byte(`{"version":"1.1.0","primary_column":"g","columns":{"g":{"encoding":"WKB","geometry_types":[]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if crs, err := omitted.Columns["g"].CRSName(); crs != DefaultCRS || err != nil {
		t.Errorf("omitted crs: %q, %v", crs, err)
	}
	null, err := ParseGeoMetadata([]byte(`{"version":"1.0.0","primary_column":"g","columns":{"g":{"encoding":"WKB","geometry_types":[],"crs":null}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := null.Columns["g"].CRSName(); !errors.Is(err, ErrUnknownCRS) {
		t.Errorf("null crs: %v, want ErrUnknownCRS", err)
	}
	// Marshal keeps the distinction.
	b, _ := NewGeoMetadata("g", DefaultCRS, nil).Marshal()
	m, err := ParseGeoMetadata(b)
	if err != nil || m.Columns["g"].CRS != nil {
		t.Errorf("round trip of CRS84: %s, %v", b, err)
	}
}

func TestParseGeoMetadataErrors(t *testing.T) {
	tests := map[string]string{
		"not json":        `{`,
		"version":         `{"version":"2.0.0","primary_column":"g","columns":{"g":{"encoding":"WKB"}}}`,
		"no primary":      `{"version":"1.0.0","columns":{"g":{"encoding":"WKB"}}}`,
		"primary missing": `{"version":"1.0.0","primary_column":"h","columns":{"g":{"encoding":"WKB"}}}`,
		"encoding":        `{"version":"1.0.0","primary_column":"g","columns":{"g":{"encoding":"point"}}}`,
		"geometry type":   `{"version":"1.0.0","primary_column":"g","columns":{"g":{"encoding":"WKB","geometry_types":["Blob"]}}}`,
	}
	for name, doc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := ParseGeoMetadata([]byte(doc))
			require.ErrorIs(t, err, ErrGeoMetadata)
			assert.Contains(t, err.Error(), ";", "the error states the rule and the fix")
		})
	}
}
