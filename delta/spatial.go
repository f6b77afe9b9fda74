package delta

import (
	"maps"
	"math"
	"strings"

	"github.com/geocompact/geocompact/spatial"
)

// coveringColumn is the struct column a table may hold its rows' bounding
// boxes in, with double fields coveringFields (GeoParquet 1.1's covering
// convention, and what Delta writers Z-order on).
const coveringColumn = "bbox"

var coveringFields = [4]string{"xmin", "ymin", "xmax", "ymax"}

// SpatialColumns finds the table's geometry and bbox columns from its schema
// and table properties, by the rules spatial.DiscoverColumns applies to an
// Arrow schema: the column named by column, else by the table property
// spatial.PropGeometryColumn, else a binary column named
// spatial.DefaultGeometryColumn (Delta writers record no geometry metadata).
// The CRS is the table property spatial.PropCRS, else spatial.DefaultCRS
// (CRSSource "default"), as for a WKB Iceberg table.
//
// The bbox columns are the four double columns spatial.BBoxColumns, else a
// struct column "bbox" with double fields xmin, ymin, xmax and ymax (set as
// the covering). They are found even when the geometry column is not: on an
// error the returned Columns still names them, for callers that work from
// bbox statistics alone.
func (s *Snapshot) SpatialColumns(column string) (spatial.Columns, error) {
	sc, err := s.ArrowSchema()
	if err != nil {
		return spatial.Columns{}, err
	}
	props := maps.Clone(s.Metadata.Configuration)
	if props == nil {
		props = map[string]string{}
	}
	defaulted := props[spatial.PropCRS] == ""
	if defaulted {
		props[spatial.PropCRS] = spatial.DefaultCRS
	}
	if column == "" && props[spatial.PropGeometryColumn] == "" {
		if f := s.Schema.Field(spatial.DefaultGeometryColumn); f != nil && isBinary(f.Type) {
			column = f.Name
		}
	}
	cols, err := spatial.DiscoverColumns(sc, nil, spatial.Hints{Column: column, Props: props})
	if err == nil && defaulted {
		cols.CRSSource = "default"
	}
	s.discoverBBox(&cols)
	return cols, err
}

func isBinary(t DataType) bool {
	p, ok := t.(*PrimitiveType)
	return ok && p.Name == "binary"
}

func isDouble(f *StructField) bool {
	p, ok := f.Type.(*PrimitiveType)
	return ok && p.Name == "double"
}

// discoverBBox sets the flat bbox columns, or else the bbox covering struct.
func (s *Snapshot) discoverBBox(cols *spatial.Columns) {
	for i, name := range spatial.BBoxColumns {
		if f := s.Schema.Field(name); f != nil && isDouble(f) {
			cols.BBox[i] = name
		} else {
			cols.BBox[i] = ""
		}
	}
	if cols.HasBBox() {
		return
	}
	f := s.Schema.Field(coveringColumn)
	if f == nil {
		return
	}
	st, ok := f.Type.(*StructType)
	if !ok {
		return
	}
	for _, name := range coveringFields {
		if sf := st.Field(name); sf == nil || !isDouble(sf) {
			return
		}
	}
	cols.Covering, cols.CoveringFields = f.Name, coveringFields
}

// BBoxPaths returns the Parquet column paths ("bbox_minx", "bbox.xmin")
// of cols' xmin, ymin, xmax and ymax columns in the table's data files,
// by their physical names (column mapping honoured): the columns whose
// row group statistics bound a data file's row groups. It reports false
// when cols has neither bbox columns nor a covering.
func (s *Snapshot) BBoxPaths(cols spatial.Columns) ([4]string, bool) {
	paths, ok := s.statsPaths(cols)
	var out [4]string
	for i, p := range paths {
		out[i] = strings.Join(p, ".")
	}
	return out, ok
}

// statsPaths returns the physical stats paths of cols' xmin, ymin, xmax and
// ymax columns, or false when cols has neither bbox columns nor a covering.
func (s *Snapshot) statsPaths(cols spatial.Columns) ([4][]string, bool) {
	var out [4][]string
	mode := s.ColumnMapping()
	switch {
	case cols.HasBBox():
		for i, name := range cols.BBox {
			f := s.Schema.Field(name)
			if f == nil {
				return out, false
			}
			out[i] = []string{f.PhysicalName(mode)}
		}
	case cols.Covering != "":
		f := s.Schema.Field(cols.Covering)
		if f == nil {
			return out, false
		}
		st, ok := f.Type.(*StructType)
		if !ok {
			return out, false
		}
		for i, name := range cols.CoveringFields {
			sf := st.Field(name)
			if sf == nil {
				return out, false
			}
			out[i] = []string{f.PhysicalName(mode), sf.PhysicalName(mode)}
		}
	default:
		return out, false
	}
	return out, true
}

// FileBound is the bounding box a live file's statistics claim for its
// rows: the minimum of the xmin and ymin columns and the maximum of the
// xmax and ymax columns (of cols' bbox columns or covering, as
// SpatialColumns finds them). It is what a reader skipping data by Delta's
// own statistics prunes on. Loose bounds (tightBounds false, after deletion
// vectors) still contain every live row, so they are used as they are.
//
// It reports false when the table has no bbox columns, or the file has no
// statistics on them (a writer may leave them out; see
// delta.dataSkippingNumIndexedCols), or they are not finite numbers or are
// inverted: such a file cannot be pruned and must be planned for every
// window.
func (s *Snapshot) FileBound(add *Add, cols spatial.Columns) (spatial.Bound, bool) {
	paths, ok := s.statsPaths(cols)
	if !ok {
		return spatial.Bound{}, false
	}
	st, err := add.ParsedStats()
	if err != nil || st == nil {
		return spatial.Bound{}, false
	}
	var v [4]float64
	for i, p := range paths {
		get := st.Min
		if i >= 2 {
			get = st.Max
		}
		raw, ok := get(p...)
		if !ok {
			return spatial.Bound{}, false
		}
		f, ok := Float(raw)
		if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
			return spatial.Bound{}, false
		}
		v[i] = f
	}
	b := spatial.Bound{MinX: v[0], MinY: v[1], MaxX: v[2], MaxY: v[3]}
	return b, b.MinX <= b.MaxX && b.MinY <= b.MaxY
}
