package validate

import (
	"errors"
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/geocompact/geocompact/spatial"
)

// bboxArrays are the four bbox columns of a batch, as double arrays.
type bboxArrays [4]*array.Float64

// rowChecker holds what Batch resolved once per batch.
type rowChecker struct {
	cfg        Config
	geo        spatial.BinaryValues
	bbox       *bboxArrays
	bboxNames  [4]string
	allowed    map[spatial.GeometryType]bool
	geographic bool
}

// Batch checks every row of rec: null geometries, WKB structure, allowed
// types and the bbox (or GeoParquet covering) columns against each
// geometry's envelope. cols says which columns to read (see
// spatial.DiscoverColumns). Row numbers in the report count from 0 at the
// batch's first row. Column-level problems (the geometry column absent or
// not binary, bbox columns not double) are reported once with row -1.
func Batch(rec arrow.RecordBatch, cols spatial.Columns, cfg Config) Report {
	r := NewReport(cfg)
	CheckBatch(&r, rec, cols, cfg, 0)
	return r
}

// CheckBatch adds rec's findings to r, numbering rows from first.
func CheckBatch(r *Report, rec arrow.RecordBatch, cols spatial.Columns, cfg Config, first int64) {
	r.Rows += rec.NumRows()
	rc, ok := newRowChecker(r, rec, cols, cfg)
	if !ok {
		return
	}
	n := rc.geo.Len()
	for i := range n {
		rc.row(r, i, first+int64(i))
	}
}

func newRowChecker(r *Report, rec arrow.RecordBatch, cols spatial.Columns, cfg Config) (*rowChecker, bool) {
	rc := newChecker(cols, cfg)
	idx := rec.Schema().FieldIndices(cols.Geometry)
	if len(idx) != 1 {
		r.Add(-1, CodeColumn, fmt.Sprintf("geometry column %q is not in the batch", cols.Geometry))
		return nil, false
	}
	var ok bool
	if rc.geo, ok = spatial.WKBValues(rec.Column(idx[0])); !ok {
		r.Add(-1, CodeColumn, fmt.Sprintf("geometry column %q has type %s, want WKB binary", cols.Geometry, rec.Column(idx[0]).DataType()))
		return nil, false
	}
	rc.bbox, rc.bboxNames = bboxColumns(r, rec, cols)
	return rc, true
}

// newChecker resolves what does not depend on a batch: the allowed types
// (cfg.AllowedTypes, else the declared GeoParquet geometry_types) and
// whether the CRS is geographic.
func newChecker(cols spatial.Columns, cfg Config) *rowChecker {
	rc := &rowChecker{cfg: cfg, geographic: spatial.IsGeographic(cols.CRS), bboxNames: cols.BBox}
	types := cfg.AllowedTypes
	if len(types) == 0 {
		types = cols.GeometryTypes
	}
	if len(types) > 0 {
		rc.allowed = map[spatial.GeometryType]bool{}
		for _, t := range types {
			if gt, ok := spatial.ParseGeometryType(t); ok {
				rc.allowed[gt] = true
			}
		}
	}
	return rc
}

// bboxColumns resolves the bbox columns, or the covering struct's fields,
// as double arrays. Wrong types are reported once; nil means no bbox check.
func bboxColumns(r *Report, rec arrow.RecordBatch, cols spatial.Columns) (*bboxArrays, [4]string) {
	var (
		out   bboxArrays
		names [4]string
	)
	switch {
	case cols.HasBBox():
		for i, name := range cols.BBox {
			names[i] = name
			a, ok := float64Column(rec, name)
			if !ok {
				r.Add(-1, CodeBBoxMissing, fmt.Sprintf("bbox column %q is not double", name))
				return nil, names
			}
			out[i] = a
		}
	case cols.Covering != "":
		idx := rec.Schema().FieldIndices(cols.Covering)
		if len(idx) != 1 {
			r.Add(-1, CodeBBoxMissing, fmt.Sprintf("covering column %q, which the geo metadata names, is not in the data: write it, or drop the covering from the metadata", cols.Covering))
			return nil, names
		}
		st, ok := rec.Column(idx[0]).(*array.Struct)
		if !ok {
			r.Add(-1, CodeBBoxMissing, fmt.Sprintf("covering column %q is not a struct: make it a struct of doubles, or drop the covering from the metadata", cols.Covering))
			return nil, names
		}
		stype := st.DataType().(*arrow.StructType)
		for i, fname := range cols.CoveringFields {
			names[i] = cols.Covering + "." + fname
			fi, ok := stype.FieldIdx(fname)
			var a *array.Float64
			if ok {
				a, ok = st.Field(fi).(*array.Float64)
			}
			if !ok {
				r.Add(-1, CodeBBoxMissing, fmt.Sprintf("covering field %q is absent or not double: make it a double, or drop the covering from the metadata", names[i]))
				return nil, names
			}
			out[i] = a
		}
	default:
		return nil, names
	}
	return &out, names
}

func float64Column(rec arrow.RecordBatch, name string) (*array.Float64, bool) {
	idx := rec.Schema().FieldIndices(name)
	if len(idx) != 1 {
		return nil, false
	}
	a, ok := rec.Column(idx[0]).(*array.Float64)
	return a, ok
}

// row checks row i of the batch, reported as row.
func (rc *rowChecker) row(r *Report, i int, row int64) {
	if rc.geo.IsNull(i) {
		rc.check(r, row, nil, true, nil, -1)
		return
	}
	if rc.bbox == nil {
		rc.check(r, row, rc.geo.Value(i), false, nil, -1)
		return
	}
	var v [4]float64
	nullAt := -1
	for k, a := range rc.bbox {
		if a.IsNull(i) {
			nullAt = k
			break
		}
		v[k] = a.Value(i)
	}
	rc.check(r, row, rc.geo.Value(i), false, &v, nullAt)
}

// check checks one row: its WKB b (null when isNull) and, when box is not
// nil, its bbox values, of which the one at nullAt (when >= 0) is null.
// It is shared by the Arrow path and the column-reader path of File.
func (rc *rowChecker) check(r *Report, row int64, b []byte, isNull bool, box *[4]float64, nullAt int) {
	if isNull {
		if !rc.cfg.AllowNull {
			r.Add(row, CodeNull, "geometry is null")
		}
		return
	}
	env, err := spatial.Envelope(b)
	if err != nil {
		code, detail := CodeType, err.Error()
		if we, ok := errors.AsType[*spatial.WKBError](err); ok {
			code = we.Code
			if r.wantDetail() {
				detail = fmt.Sprintf("at byte %d of %d: %s", we.Offset, len(b), we.Reason)
			}
		}
		r.Add(row, code, detail)
		return
	}
	if r.data != nil {
		_ = r.data.AddWithEnvelope(b, env) // b's header was just read by Envelope
	}
	if rc.allowed != nil {
		if t, _ := spatial.WKBType(b); !rc.allowed[t] {
			r.Add(row, CodeType, fmt.Sprintf("%s is not an allowed geometry type", t))
		}
	}
	if box == nil {
		return
	}
	if nullAt >= 0 {
		r.Add(row, CodeBBoxMissing, rc.bboxNames[nullAt]+" is null")
		return
	}
	rc.checkBBox(r, row, box, env)
}

// checkBBox compares the bbox values v of a row with its envelope env.
func (rc *rowChecker) checkBBox(r *Report, row int64, v *[4]float64, env spatial.Bound) {
	if env.IsEmpty() {
		return // an empty geometry has no box to agree with
	}
	if rc.geographic && (v[0] > v[2] || env.MaxX-env.MinX > 180) {
		detail := ""
		if r.wantDetail() {
			detail = antimeridianDetail(v, env)
		}
		r.Add(row, CodeAntimeridian, detail)
		return
	}
	want := [4]float64{env.MinX, env.MinY, env.MaxX, env.MaxY}
	tol := rc.cfg.Tolerance
	for k := range v {
		if d := math.Abs(v[k] - want[k]); !(d <= tol) {
			detail := ""
			if r.wantDetail() {
				detail = fmt.Sprintf("%s = %g, envelope %g (off by %g, tolerance %g)", rc.bboxNames[k], v[k], want[k], d, tol)
			}
			r.Add(row, CodeBBoxMismatch, detail)
			return
		}
	}
}

// antimeridianDetail says what raised a bbox.antimeridian warning for the
// bbox values v of a geometry with planar envelope env, what it means for
// readers, and how to avoid it.
func antimeridianDetail(v *[4]float64, env spatial.Bound) string {
	const avoid = "only a warning: the data are valid GeoParquet; split the geometry at 180° to avoid it"
	if v[0] > v[2] {
		return fmt.Sprintf("bbox xmin %g > xmax %g: the box crosses the antimeridian, as GeoParquet allows; "+
			"bbox filters that assume xmin <= xmax read it as empty (and may skip the row) or as the whole world; %s", v[0], v[2], avoid)
	}
	return fmt.Sprintf("geometry spans x %g to %g, more than 180°: if it crosses the antimeridian, its bbox covers "+
		"nearly every longitude and no bbox filter skips it; %s", env.MinX, env.MaxX, avoid)
}
