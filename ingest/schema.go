package ingest

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/geocompact/geocompact/spatial"
	format "github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/validate"
)

// target is what the files are checked and conformed against: the
// existing table's geometry, or for a table to create what the first file
// declares.
type target struct {
	cols     spatial.Columns // geometry column, encoding and CRS to match
	wantBBox bool            // the table stores bbox columns
}

func (in *ingester) target(ctx context.Context, loaded format.Loaded, first string) (target, error) {
	if loaded.Exists {
		cols, err := in.dst.Columns(in.cfg.GeometryColumn)
		if err != nil {
			return target{}, fmt.Errorf("table %s: %w", in.dst.Name(), err)
		}
		return target{cols: cols, wantBBox: cols.HasBBox()}, nil
	}
	cfg := in.cfg.Checks
	cfg.Column = in.cfg.GeometryColumn
	cols, _, err := validate.Inspect(ctx, first, cfg)
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

// newArrowSchema is the Arrow schema of a table created from the first
// file: its columns as they are, the geometry column as WKB binary, plus
// bbox columns when the table stores them.
func (in *ingester) newArrowSchema(ctx context.Context, t target, first string) (*arrow.Schema, error) {
	cfg := in.cfg.Checks
	cfg.Column = t.cols.Geometry
	_, sc, err := validate.Inspect(ctx, first, cfg)
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
