package tablecheck

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/validate"
)

// Delta validates a Delta table as Table validates an Iceberg table: its
// geometry metadata (the columns delta.Snapshot.SpatialColumns finds, the
// CRS) and then the live rows of every live file of the latest snapshot,
// with deletion vectors applied, cfg.Parallelism files at a time. Only the
// geometry and bbox columns are read. Row numbers count a file's live rows.
// name labels the report; SnapshotID holds the table version.
//
// A file that cannot be found is an error; one that cannot be read (not
// Parquet, truncated, a broken deletion vector) is a file.corrupt finding.
func Delta(ctx context.Context, tbl *delta.Table, name string, cfg validate.Config) (*validate.TableReport, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s, err := tbl.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	rep := &validate.TableReport{Table: name, SnapshotID: s.Version, Metadata: validate.NewReport(cfg), Total: validate.NewReport(cfg)}
	cols, err := s.SpatialColumns(cfg.Column)
	if err != nil {
		rep.ColumnProblem(err)
		return rep, nil
	}
	checkTableMetadata(&rep.Metadata, cols, s.Metadata.Configuration, cfg)
	rep.Total.Merge(rep.Metadata)
	paths := make([]string, len(s.Files))
	for i, f := range s.Files {
		if paths[i], err = f.DecodedPath(); err != nil {
			return nil, err
		}
	}
	read := []string{cols.Geometry, cols.Covering}
	read = append(read, cols.BBox[:]...)
	opts := delta.ReadOptions{BatchSize: int64(cfg.BatchSize), Columns: read}
	err = validateEach(ctx, rep, paths, cfg, func(i int) (*validate.Report, error) {
		return deltaFile(ctx, tbl, s, s.Files[i], opts, cols, cfg)
	})
	if err != nil {
		return nil, err
	}
	for _, f := range rep.Files {
		rep.Total.Merge(f.Report)
	}
	return rep, nil
}

// deltaFile validates the live rows of one file of snapshot s.
func deltaFile(ctx context.Context, tbl *delta.Table, s *delta.Snapshot, add *delta.Add, opts delta.ReadOptions, cols spatial.Columns, cfg validate.Config) (rep *validate.Report, err error) {
	r := validate.NewReport(cfg)
	rep = &r
	defer validate.RecoverCorrupt(rep, &err)
	var row int64
	err = tbl.ReadFile(ctx, s, add, opts, func(rec arrow.RecordBatch) error {
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
