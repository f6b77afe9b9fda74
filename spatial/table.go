package spatial

// Table properties that record a table's geometry, written by generate and
// ingest and read by every command that needs the geometry column.
const (
	// PropGeometryColumn names the table's primary geometry column.
	PropGeometryColumn = "geocompact.geometry.column"
	// PropGeometryEncoding is the geometry's encoding: "wkb" for a binary
	// column, "iceberg-geometry" for the Iceberg v3 type.
	PropGeometryEncoding = "geocompact.geometry.encoding"
	// PropCRS is the geometry's coordinate reference system, e.g.
	// "OGC:CRS84" or "EPSG:3857".
	PropCRS = "geocompact.geometry.crs"
)

// Encodings recorded in PropGeometryEncoding.
const (
	EncodingWKB             = "wkb"
	EncodingIcebergGeometry = "iceberg-geometry"
)

// DefaultCRS is the CRS of lon/lat data, and what GeoParquet assumes when a
// column's crs is omitted.
const DefaultCRS = "OGC:CRS84"

// BBoxColumns are the names of the four double columns that hold each row's
// bounding box. Their min/max statistics in manifests let scan planning
// prune files by a bbox window.
var BBoxColumns = [4]string{"bbox_minx", "bbox_miny", "bbox_maxx", "bbox_maxy"}
