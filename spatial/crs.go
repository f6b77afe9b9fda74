package spatial

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrCRS is the category of CRS values that cannot be read or identified.
var ErrCRS = errors.New("spatial: invalid CRS")

// ErrUnknownCRS is returned for a CRS that is explicitly unknown: a JSON null
// in GeoParquet metadata, which the specification defines as "undefined",
// or an empty string. It wraps ErrCRS.
var ErrUnknownCRS = fmt.Errorf("%w: unknown (null)", ErrCRS)

// NormalizeCRS returns the canonical spelling of a CRS, "AUTHORITY:CODE"
// with the authority upper-cased, so the same CRS written two ways compares
// equal with ==. It accepts "EPSG:3857" (any case), "srid:3857" (Iceberg),
// URNs ("urn:ogc:def:crs:EPSG::3857", "urn:ogc:def:crs:OGC:1.3:CRS84"),
// OGC URLs ("http://www.opengis.net/def/crs/OGC/1.3/CRS84") and PROJJSON
// text (identified by its id or first ids entry).
//
// It deliberately does not merge different CRSs that share a datum:
// EPSG:4326 (latitude first) and OGC:CRS84 (longitude first) differ in axis
// order and stay different. PROJJSON without an id is returned in a
// canonical "PROJJSON:" form that only equals the same definition.
func NormalizeCRS(s string) (string, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return "", ErrUnknownCRS
	case strings.HasPrefix(s, "{"):
		return normalizePROJJSON([]byte(s))
	}
	lower := strings.ToLower(s)
	switch {
	case strings.HasPrefix(lower, "srid:"):
		return authorityCode("EPSG", s[len("srid:"):])
	case strings.HasPrefix(lower, "urn:ogc:def:crs:"):
		// urn:ogc:def:crs:AUTHORITY:VERSION:CODE, VERSION often empty.
		parts := strings.Split(s[len("urn:ogc:def:crs:"):], ":")
		if len(parts) < 2 {
			return "", fmt.Errorf("%w: URN %s", ErrCRS, QuoteExcerpt(s))
		}
		return authorityCode(parts[0], parts[len(parts)-1])
	case strings.HasPrefix(lower, "http://www.opengis.net/def/crs/"), strings.HasPrefix(lower, "https://www.opengis.net/def/crs/"):
		// .../def/crs/AUTHORITY/VERSION/CODE
		rest := s[strings.Index(lower, "/def/crs/")+len("/def/crs/"):]
		parts := strings.Split(strings.Trim(rest, "/"), "/")
		if len(parts) < 2 {
			return "", fmt.Errorf("%w: URL %s", ErrCRS, QuoteExcerpt(s))
		}
		return authorityCode(parts[0], parts[len(parts)-1])
	}
	auth, code, ok := strings.Cut(s, ":")
	if !ok {
		return "", fmt.Errorf("%w: %s is not AUTHORITY:CODE, a URN or PROJJSON", ErrCRS, QuoteExcerpt(s))
	}
	return authorityCode(auth, code)
}

// authorityCode formats an authority and code canonically.
func authorityCode(auth, code string) (string, error) {
	auth, code = strings.ToUpper(strings.TrimSpace(auth)), strings.TrimSpace(code)
	if auth == "" || code == "" || strings.ContainsAny(auth+code, " :/{}") {
		return "", fmt.Errorf("%w: authority %s code %s", ErrCRS, QuoteExcerpt(auth), QuoteExcerpt(code))
	}
	if auth == "OGC" {
		code = strings.ToUpper(code)
	}
	return auth + ":" + code, nil
}

// projjsonID is the identifier member of a PROJJSON object.
type projjsonID struct {
	Authority string          `json:"authority"`
	Code      json.RawMessage `json:"code"` // a number or a string
}

// normalizePROJJSON identifies a PROJJSON CRS by its id.
func normalizePROJJSON(raw []byte) (string, error) {
	var obj struct {
		ID  *projjsonID  `json:"id"`
		IDs []projjsonID `json:"ids"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return "", fmt.Errorf("%w: PROJJSON: %v", ErrCRS, err)
	}
	id := obj.ID
	if id == nil && len(obj.IDs) > 0 {
		id = &obj.IDs[0]
	}
	if id == nil {
		var buf bytes.Buffer
		if err := json.Compact(&buf, raw); err != nil {
			return "", fmt.Errorf("%w: PROJJSON: %v", ErrCRS, err)
		}
		return "PROJJSON:" + buf.String(), nil
	}
	code := string(id.Code)
	if s, err := strconv.Unquote(code); err == nil {
		code = s
	}
	return authorityCode(id.Authority, code)
}

// ParseGeoParquetCRS reads the "crs" member of a GeoParquet column. raw is
// nil when the member is omitted, which the specification defines as
// OGC:CRS84; a JSON null means the CRS is unknown and returns
// ErrUnknownCRS. A JSON string or a PROJJSON object is normalised with
// NormalizeCRS.
func ParseGeoParquetCRS(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0:
		return DefaultCRS, nil
	case string(raw) == "null":
		return "", ErrUnknownCRS
	case raw[0] == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", fmt.Errorf("%w: %v", ErrCRS, err)
		}
		return NormalizeCRS(s)
	case raw[0] == '{':
		return normalizePROJJSON(raw)
	}
	return "", fmt.Errorf("%w: crs %s is neither a string nor a PROJJSON object", ErrCRS, Excerpt(string(raw)))
}

// geographicCRS are the common CRSs whose coordinates are degrees of
// longitude and latitude, where the antimeridian matters.
var geographicCRS = map[string]bool{
	"OGC:CRS84": true, "OGC:CRS83": true, "OGC:CRS27": true,
	"EPSG:4326": true, "EPSG:4269": true, "EPSG:4258": true, "EPSG:4267": true,
	"EPSG:4283": true, "EPSG:4617": true, "EPSG:4674": true, "EPSG:4490": true,
	"EPSG:4230": true, "EPSG:4979": true, "EPSG:4937": true, "EPSG:4612": true,
}

// IsGeographic reports whether the canonical CRS crs is one of the common
// geographic (longitude/latitude) CRSs. Unknown CRSs are taken as planar.
func IsGeographic(crs string) bool { return geographicCRS[crs] }

// PROJJSON returns the GeoParquet "crs" member for the canonical CRS crs: a
// PROJJSON object. A CRS that came from PROJJSON ("PROJJSON:{...}") is
// returned as it was; an AUTHORITY:CODE CRS becomes an object naming it by
// its id, which readers resolve against their CRS database. Callers omit
// the member for OGC:CRS84, the GeoParquet default.
func PROJJSON(crs string) json.RawMessage {
	if raw, ok := strings.CutPrefix(crs, "PROJJSON:"); ok {
		return json.RawMessage(raw)
	}
	auth, code, _ := strings.Cut(crs, ":")
	id := map[string]any{"authority": auth, "code": code}
	if n, err := strconv.Atoi(code); err == nil {
		id["code"] = n
	}
	b, _ := json.Marshal(map[string]any{"name": crs, "id": id}) // maps of strings and ints always marshal
	return b
}

// excerptLen is how many bytes of a value a message echoes.
const excerptLen = 200

// Excerpt returns s for a message: whole when short, else its first 200
// bytes (cut at a character boundary) followed by "… (N bytes)", so that
// a huge value from a file or a property is never echoed whole.
func Excerpt(s string) string {
	if len(s) <= excerptLen {
		return s
	}
	return strings.ToValidUTF8(s[:excerptLen], "") + fmt.Sprintf("… (%d bytes)", len(s))
}

// QuoteExcerpt is Excerpt with the value Go-quoted, as %q writes it.
func QuoteExcerpt(s string) string {
	if len(s) <= excerptLen {
		return strconv.Quote(s)
	}
	return strconv.Quote(strings.ToValidUTF8(s[:excerptLen], "")) + fmt.Sprintf("… (%d bytes)", len(s))
}
