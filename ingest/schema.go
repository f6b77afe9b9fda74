package ingest

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/spatial/icebergspatial"
	"github.com/geocompact/geocompact/validate"
)

// target is what the files are checked and conformed against: the
// existing table's geometry, or for a table to create what the first file
// declares.
type target struct {
	cols     spatial.Columns // geometry column, encoding and CRS to match
	wantBBox bool            // the table stores bbox columns
}

func (in *ingester) target(ctx context.Context, tbl *table.Table) (target, error) {
	if tbl != nil {
		cols, err := icebergspatial.Columns(tbl.Schema(), tbl.Properties(), "")
		if err != nil {
			return target{}, fmt.Errorf("table %s: %w", in.cfg.Table, err)
		}
		return target{cols: cols, wantBBox: cols.HasBBox()}, nil
	}
	cfg := in.cfg.Checks
	cfg.Column = in.cfg.GeometryColumn
	cols, _, err := validate.Inspect(ctx, in.cfg.Files[0], cfg)
	if err != nil && !errors.Is(err, validate.ErrCorrupt) {
		if _, ok := errors.AsType[*spatial.ColumnError](err); !ok {
			return target{}, err
		}
	}
	// A corrupt or unusable first file is reported by validation.
	crs := cols.CRS
	if crs == "" {
		crs = spatial.DefaultCRS
	}
	enc := spatial.EncodingWKB
	if in.cfg.formatVersion() >= 3 {
		enc = spatial.EncodingIcebergGeometry
	}
	name := cols.Geometry
	if name == "" {
		name = spatial.DefaultGeometryColumn
	}
	return target{
		cols:     spatial.Columns{Geometry: name, Encoding: enc, CRS: crs},
		wantBBox: in.cfg.formatVersion() < 3 || in.cfg.AddBBox,
	}, nil
}

// newTableSchema derives the schema and properties of a table created
// from the first file: its columns as they are, plus bbox columns when the
// table stores them, the geometry column as WKB binary (v2) or the
// geometry type with the data's CRS (v3).
func (in *ingester) newTableSchema(ctx context.Context, t target) (*iceberg.Schema, iceberg.Properties, error) {
	sc, err := in.newArrowSchema(ctx, t)
	if err != nil {
		return nil, nil, err
	}
	isc, err := table.ArrowSchemaToIcebergWithFreshIDs(sc, true)
	if err != nil {
		return nil, nil, fmt.Errorf("derive schema from %s: %w", in.cfg.Files[0], err)
	}
	props := SpatialTableProps(in.cfg.formatVersion(), t.cols)
	if in.cfg.formatVersion() < 3 {
		return isc, props, nil
	}
	gt, err := iceberg.GeometryTypeOf(t.cols.CRS)
	if err != nil {
		return nil, nil, fmt.Errorf("geometry type for CRS %s: %w", t.cols.CRS, err)
	}
	out := make([]iceberg.NestedField, 0, len(isc.Fields()))
	for _, f := range isc.Fields() {
		if f.Name == t.cols.Geometry {
			f.Type = gt
		}
		out = append(out, f)
	}
	return iceberg.NewSchema(0, out...), props, nil
}

// newArrowSchema is the Arrow schema of a table created from the first
// file: its columns as they are, the geometry column as WKB binary, plus
// bbox columns when the table stores them.
func (in *ingester) newArrowSchema(ctx context.Context, t target) (*arrow.Schema, error) {
	cfg := in.cfg.Checks
	cfg.Column = t.cols.Geometry
	_, sc, err := validate.Inspect(ctx, in.cfg.Files[0], cfg)
	if err != nil {
		return nil, err
	}
	fields := sc.Fields()
	for i, f := range fields {
		if f.Name == t.cols.Geometry {
			fields[i].Type = arrow.BinaryTypes.Binary
			fields[i].Metadata = arrow.Metadata{}
		}
	}
	if t.wantBBox {
		for _, name := range spatial.BBoxColumns {
			if len(sc.FieldIndices(name)) == 0 {
				fields = append(fields, arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Float64, Nullable: true})
			}
		}
	}
	return arrow.NewSchema(fields, nil), nil
}
