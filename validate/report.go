// Package validate checks spatial data before it reaches a table: WKB
// geometry, CRS, GeoParquet metadata, bbox columns and nulls, for an Arrow
// batch, a Parquet file or a table's current snapshot. It only reads and
// reports; it never writes anything and never exits.
package validate

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"runtime"
	"slices"

	"github.com/geocompact/geocompact/spatial"
)

// Check codes. Each finding carries one; they are stable and appear in
// --json output.
const (
	CodeTruncated    = spatial.WKBCodeTruncated // WKB shorter than its header or counts say
	CodeType         = spatial.WKBCodeType      // bad byte order, unknown or disallowed geometry type
	CodeNonFinite    = spatial.WKBCodeNonFinite // NaN or Inf coordinate
	CodeRingOpen     = spatial.WKBCodeRingOpen  // polygon ring not closed
	CodeRingShort    = spatial.WKBCodeRingShort // polygon ring with fewer than 4 points
	CodeTrailing     = spatial.WKBCodeTrailing  // bytes after the geometry
	CodeDepth        = spatial.WKBCodeDepth     // collections nested too deep
	CodeCRSMissing   = "crs.missing"            // no CRS, or an explicitly unknown one
	CodeCRSMismatch  = "crs.mismatch"           // the data's CRS differs from the expected one
	CodeGeoMetadata  = "geo.metadata"           // GeoParquet metadata unreadable or inconsistent
	CodeBBoxMissing  = "bbox.missing"           // bbox columns absent, not double, or null
	CodeBBoxMismatch = "bbox.mismatch"          // bbox differs from the geometry's envelope
	// CodeAntimeridian marks a geographic geometry that crosses the
	// antimeridian (bbox xmin > xmax, or an x-span over 180°). It is a
	// warning: counted and shown, but it does not fail a report.
	CodeAntimeridian = "bbox.antimeridian"
	// CodeCoveringFlat, CodeCovering and CodeGeoBBox are malformed
	// optional GeoParquet hints (see spatial.GeoWarning): warnings.
	CodeCoveringFlat = spatial.GeoCodeCoveringFlat
	CodeCovering     = spatial.GeoCodeCovering
	CodeGeoBBox      = spatial.GeoCodeBBox
	CodeNull         = "geometry.null"   // null geometry without AllowNull
	CodeColumn       = "geometry.column" // geometry column absent or not WKB
	CodeCorrupt      = "file.corrupt"    // empty, truncated or not Parquet
)

// warnings are codes that are reported but do not make a report fail.
var warnings = map[string]bool{CodeAntimeridian: true, CodeCoveringFlat: true, CodeCovering: true, CodeGeoBBox: true}

// IsWarning reports whether code is informational only (unless
// Config.Strict makes every finding a violation).
func IsWarning(code string) bool { return warnings[code] }

// Config says what to check. Use DefaultConfig and change fields.
type Config struct {
	// Tolerance is the largest difference allowed between a bbox column and
	// the geometry's envelope. Default 1e-6.
	Tolerance float64
	// AllowNull accepts null geometries (and null bbox values beside them).
	// Default false.
	AllowNull bool
	// AllowedTypes, when non-empty, restricts the top-level geometry types
	// ("Point", "MultiPolygon", ...). Default: any type. Types declared in
	// GeoParquet geometry_types are enforced in any case.
	AllowedTypes []string
	// MaxExamples caps the findings kept per report; counts are always
	// complete. Default 10.
	MaxExamples int
	// CRS is the canonical CRS the data must have (for ingest, the table's);
	// empty means any known CRS. Default empty.
	CRS string
	// RequireBBox makes missing bbox columns a violation for WKB geometry.
	// Iceberg v3 geometry never needs them. Default true.
	RequireBBox bool
	// Column names the geometry column, overriding table properties and
	// GeoParquet metadata. Default empty.
	Column string
	// Props are table properties consulted for the geometry column and CRS.
	Props map[string]string
	// BatchSize is the number of rows read per Arrow batch. Default 65536.
	BatchSize int
	// Parallelism is how many files Table validates at once. Default
	// GOMAXPROCS.
	Parallelism int
	// Logger receives one line per validated file. Nil discards.
	Logger *slog.Logger
	// Strict makes warnings (malformed optional hints, antimeridian
	// crossings) violations. Default false.
	Strict bool
}

// DefaultConfig returns the defaults documented on Config.
func DefaultConfig() Config {
	return Config{Tolerance: 1e-6, MaxExamples: 10, RequireBBox: true, BatchSize: 1 << 16, Parallelism: runtime.GOMAXPROCS(0)}
}

// ErrConfig marks an invalid Config.
var ErrConfig = errors.New("validate: invalid config")

// Validate checks the config's values.
func (c Config) Validate() error {
	switch {
	case c.Tolerance < 0 || c.Tolerance != c.Tolerance:
		return fmt.Errorf("%w: tolerance %v, want >= 0", ErrConfig, c.Tolerance)
	case c.MaxExamples < 0:
		return fmt.Errorf("%w: max examples %d, want >= 0", ErrConfig, c.MaxExamples)
	}
	for _, t := range c.AllowedTypes {
		if _, ok := spatial.ParseGeometryType(t); !ok {
			return fmt.Errorf("%w: geometry type %q", ErrConfig, t)
		}
	}
	return nil
}

// Log returns the logger, or one that discards.
func (c Config) Log() *slog.Logger {
	if c.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Logger
}

// Finding is one offending row, or a file-level problem when Row is -1.
type Finding struct {
	Row    int64  `json:"row"`
	Code   string `json:"code"`
	Detail string `json:"detail"`
}

// Report is the result of validating a batch, a file or a table's
// metadata: how many rows were read, how many findings of each code, and
// the first MaxExamples of them.
type Report struct {
	Rows     int64            `json:"rows"`
	Counts   map[string]int64 `json:"counts"`
	Examples []Finding        `json:"examples"`
	// Geometry describes the file's geometry as read: set by File and
	// Reader when the geometry column was found.
	Geometry *GeometryInfo `json:"geometry,omitempty"`

	max    int
	strict bool
	data   *spatial.GeoStats
}

// GeometryInfo is what validating a file learned about its geometry: the
// column, encoding and CRS it resolved, the types found in the rows and
// their extent.
type GeometryInfo struct {
	Column   string   `json:"column"`
	Encoding string   `json:"encoding"`
	CRS      string   `json:"crs"`
	Types    []string `json:"types"`
	// BBox is the rows' extent [xmin, ymin, xmax, ymax]; nil when no row
	// has a non-empty geometry.
	BBox []float64 `json:"bbox,omitempty"`
}

// NewReport is an empty report with cfg's cap on examples.
func NewReport(cfg Config) Report {
	return Report{Counts: map[string]int64{}, Examples: []Finding{}, max: cfg.MaxExamples, strict: cfg.Strict, data: spatial.NewGeoStats()}
}

// wantDetail reports whether another example would be kept, so callers
// can skip formatting details that would be dropped.
func (r *Report) wantDetail() bool { return len(r.Examples) < r.max }

// Add counts a finding and keeps it as an example while there is room.
func (r *Report) Add(row int64, code, detail string) {
	if r.Counts == nil {
		r.Counts = map[string]int64{}
	}
	r.Counts[code]++
	if len(r.Examples) < r.max {
		r.Examples = append(r.Examples, Finding{Row: row, Code: code, Detail: detail})
	}
}

// OK reports whether r holds no violation (warnings do not count).
func (r *Report) OK() bool { return r.Violations() == 0 }

// Violations returns the number of findings that are not warnings.
func (r *Report) Violations() int64 {
	var n int64
	for code, c := range r.Counts {
		if r.strict || !warnings[code] {
			n += c
		}
	}
	return n
}

// Codes returns the codes found, sorted.
func (r *Report) Codes() []string { return slices.Sorted(maps.Keys(r.Counts)) }

// Merge adds o's rows and counts to r and keeps its examples up to r's
// cap.
func (r *Report) Merge(o Report) {
	r.Rows += o.Rows
	for code, n := range o.Counts {
		r.Counts[code] += n
	}
	for _, f := range o.Examples {
		if len(r.Examples) >= r.max {
			break
		}
		r.Examples = append(r.Examples, f)
	}
}

// FileReport is the report of one data file of a table.
type FileReport struct {
	Path string `json:"path"`
	Report
}

// TableReport is the result of validating a table: its geometry metadata,
// each data file of the current snapshot, and the totals.
type TableReport struct {
	Table      string       `json:"table"`
	SnapshotID int64        `json:"snapshot_id"`
	Metadata   Report       `json:"metadata"`
	Files      []FileReport `json:"files"`
	Total      Report       `json:"total"`
}

// OK reports whether the metadata and every file are free of violations.
func (r *TableReport) OK() bool { return r.Total.OK() }

// ColumnProblem records a table without a usable geometry column as a
// metadata finding (the ColumnError's code, else geometry.column).
func (r *TableReport) ColumnProblem(err error) {
	code := CodeColumn
	if ce, ok := errors.AsType[*spatial.ColumnError](err); ok {
		code = ce.Code
	}
	r.Metadata.Add(-1, code, err.Error())
	r.Total.Merge(r.Metadata)
}
