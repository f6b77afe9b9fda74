package deltatable

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/validate"
)

// CheckColumns returns the table's spatial columns (the geometry column
// named column, when set; see delta.Snapshot.SpatialColumns) and its
// configuration, which the table's spatial metadata is checked against.
func (f *format) CheckColumns(column string) (spatial.Columns, map[string]string, error) {
	cols, err := f.snap.SpatialColumns(column)
	return cols, f.snap.Metadata.Configuration, err
}

// ReportPath names pf in a validation report: its path as the log
// records it, decoded.
func (f *format) ReportPath(pf table.PlanFile) (string, error) {
	return pf.File.(*delta.Add).DecodedPath()
}

// CheckFile validates the live rows of the file pf, deletion vector
// applied, reading only the geometry and bbox columns; row numbers count
// the file's live rows. A file that cannot be found is an error; one that
// cannot be read (not Parquet, truncated, a broken deletion vector) is a
// file.corrupt finding.
func (f *format) CheckFile(ctx context.Context, pf table.PlanFile, cols spatial.Columns, cfg validate.Config) (rep *validate.Report, err error) {
	r := validate.NewReport(cfg)
	rep = &r
	defer validate.RecoverCorrupt(rep, &err)
	read := append([]string{cols.Geometry, cols.Covering}, cols.BBox[:]...)
	opts := delta.ReadOptions{BatchSize: int64(cfg.BatchSize), Columns: read}
	var row int64
	err = f.t.ReadFile(ctx, f.snap, pf.File.(*delta.Add), opts, func(rec arrow.RecordBatch) error {
		validate.CheckBatch(rep, rec, cols, cfg, row)
		row += rec.NumRows()
		return nil
	})
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return nil, context.Cause(ctx)
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("validate: %w", err)
	default:
		rep.Add(-1, validate.CodeCorrupt, err.Error())
	}
	validate.FinishFile(rep, cols, cfg)
	return rep, nil
}
