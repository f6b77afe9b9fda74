// Package geoparquettest checks, in tests, that a Parquet file is valid
// GeoParquet 1.1 by the specification's rules, independently of the code
// that wrote it: the "geo" document's required members and types, and the
// rows against it (every geometry's type declared, every envelope inside
// the file bbox, covering columns present and double).
package geoparquettest

import (
	"encoding/binary"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/spatial"
)

// Result is what Check read from a valid file.
type Result struct {
	Version  string
	Primary  string
	Declared []string            // geometry_types as written
	Types    []string            // the types found in the rows, sorted
	BBox     []float64           // the file bbox as written
	CRS      json.RawMessage     // the crs member; nil when omitted
	Covering map[string][]string // the covering bbox paths, if any
	Rows     int64
}

// column is the primary column's metadata, as the specification types it.
type column struct {
	Encoding      string          `json:"encoding"`
	GeometryTypes []string        `json:"geometry_types"`
	CRS           json.RawMessage `json:"crs"`
	BBox          []float64       `json:"bbox"`
	Covering      *struct {
		BBox map[string][]string `json:"bbox"`
	} `json:"covering"`
}

var typeNames = []string{"Point", "LineString", "Polygon", "MultiPoint", "MultiLineString", "MultiPolygon", "GeometryCollection"}

// Check fails t unless the Parquet file at path (a local path or file://
// URL) is valid GeoParquet 1.1, and returns what it read.
func Check(t testing.TB, path string) Result {
	t.Helper()
	pf, err := file.OpenParquetFile(strings.TrimPrefix(path, "file://"), false)
	require.NoError(t, err, "open %s", path)
	defer pf.Close()
	raw := pf.MetaData().KeyValueMetadata().FindValue("geo")
	require.NotNil(t, raw, "%s has no geo key", path)
	var doc struct {
		Version string            `json:"version"`
		Primary string            `json:"primary_column"`
		Columns map[string]column `json:"columns"`
	}
	require.NoError(t, json.Unmarshal([]byte(*raw), &doc), "geo is a JSON object: %s", *raw)
	require.Equal(t, "1.1.0", doc.Version)
	require.NotEmpty(t, doc.Primary, "primary_column is required")
	col, ok := doc.Columns[doc.Primary]
	require.True(t, ok, "primary_column %q is in columns", doc.Primary)
	require.Equal(t, "WKB", col.Encoding)
	require.NotNil(t, col.GeometryTypes, "geometry_types is required (may be empty)")
	for _, gt := range col.GeometryTypes {
		require.Contains(t, typeNames, strings.TrimSuffix(gt, " Z"), "geometry type %q", gt)
	}
	require.Len(t, slices.Compact(slices.Sorted(slices.Values(col.GeometryTypes))), len(col.GeometryTypes), "geometry_types are unique")
	if len(col.CRS) > 0 {
		require.True(t, string(col.CRS) == "null" || col.CRS[0] == '{', "crs is PROJJSON or null, got %s", col.CRS)
	}
	if col.BBox != nil {
		require.Len(t, col.BBox, 4, "bbox is [xmin, ymin, xmax, ymax]")
		require.LessOrEqual(t, col.BBox[1], col.BBox[3], "bbox ymin <= ymax")
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	require.NoError(t, err)
	sc, err := fr.Schema()
	require.NoError(t, err)
	if col.Covering != nil {
		checkCovering(t, sc, col.Covering.BBox)
	}
	res := Result{Version: doc.Version, Primary: doc.Primary, Declared: col.GeometryTypes, BBox: col.BBox, CRS: col.CRS}
	if col.Covering != nil {
		res.Covering = col.Covering.BBox
	}
	checkRows(t, fr, sc, col, &res)
	return res
}

// checkCovering checks the 1.1 covering: four [column, field] paths into
// one struct column at the root whose fields are doubles.
func checkCovering(t testing.TB, sc *arrow.Schema, paths map[string][]string) {
	t.Helper()
	var structCol string
	for _, k := range []string{"xmin", "ymin", "xmax", "ymax"} {
		p := paths[k]
		require.Len(t, p, 2, "covering bbox %s is [column, field]", k)
		if structCol == "" {
			structCol = p[0]
		}
		require.Equal(t, structCol, p[0], "covering paths name one column")
		f, ok := sc.FieldsByName(p[0])
		require.True(t, ok && len(f) == 1, "covering column %q exists", p[0])
		st, ok := f[0].Type.(*arrow.StructType)
		require.True(t, ok, "covering column %q is a struct", p[0])
		sf, ok := st.FieldByName(p[1])
		require.True(t, ok, "covering field %q.%q exists", p[0], p[1])
		require.Equal(t, arrow.FLOAT64, sf.Type.ID(), "covering field %q.%q is double", p[0], p[1])
	}
}

// checkRows reads the primary column and checks every value against the
// declared types and bbox.
func checkRows(t testing.TB, fr *pqarrow.FileReader, sc *arrow.Schema, col column, res *Result) {
	t.Helper()
	idx := sc.FieldIndices(res.Primary)
	require.Len(t, idx, 1, "primary column %q is in the file", res.Primary)
	tbl, err := fr.ReadTable(t.Context())
	require.NoError(t, err)
	defer tbl.Release()
	seen := map[string]bool{}
	for _, chunk := range tbl.Column(idx[0]).Data().Chunks() {
		bin, ok := spatial.WKBValues(chunk)
		require.True(t, ok, "primary column is binary, got %s", chunk.DataType())
		for i := range bin.Len() {
			res.Rows++
			if bin.IsNull(i) {
				continue
			}
			b := bin.Value(i)
			name := typeName(t, b)
			seen[name] = true
			if len(col.GeometryTypes) > 0 {
				require.Contains(t, col.GeometryTypes, name, "row %d's type is declared", res.Rows-1)
			}
			env, err := spatial.Envelope(b)
			require.NoError(t, err)
			if col.BBox != nil && !env.IsEmpty() {
				bb := col.BBox
				require.True(t, env.MinX >= bb[0] && env.MinY >= bb[1] && env.MaxX <= bb[2] && env.MaxY <= bb[3],
					"row %d's envelope %+v is inside the file bbox %v", res.Rows-1, env, bb)
			}
		}
	}
	for name := range seen {
		res.Types = append(res.Types, name)
	}
	slices.Sort(res.Types)
}

// typeName reads a WKB header's type as GeoParquet names it.
func typeName(t testing.TB, b []byte) string {
	t.Helper()
	require.GreaterOrEqual(t, len(b), 5, "WKB header")
	var code uint32
	if b[0] == 1 {
		code = binary.LittleEndian.Uint32(b[1:])
	} else {
		code = binary.BigEndian.Uint32(b[1:])
	}
	z := code&0x80000000 != 0
	code &= 0x0fffffff
	if code >= 1000 {
		z = z || code/1000 == 1 || code/1000 == 3
		code %= 1000
	}
	require.True(t, code >= 1 && code <= 7, "WKB type code %d", code)
	if z {
		return typeNames[code-1] + " Z"
	}
	return typeNames[code-1]
}
