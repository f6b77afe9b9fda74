// Package tablecheck validates whole tables, Iceberg and Delta, with
// validate's file checks: the table's spatial metadata, then every live
// file.
package tablecheck

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/validate"
)

// Source is what validating a table asks of its format (the table's
// Format): table/icebergtable and table/deltatable implement it.
type Source interface {
	// CheckColumns returns the table's spatial columns, the geometry
	// column named column when set, and the properties its spatial
	// metadata is checked against.
	CheckColumns(column string) (spatial.Columns, map[string]string, error)
	// ReportPath is how the live file f is named in the report.
	ReportPath(f table.PlanFile) (string, error)
	// CheckFile validates the live file f against cols with cfg's
	// checks. A file that cannot be found or opened is an error; one
	// that cannot be read is a file.corrupt finding.
	CheckFile(ctx context.Context, f table.PlanFile, cols spatial.Columns, cfg validate.Config) (*validate.Report, error)
}

// Check validates t: its geometry metadata (the geometry column and
// encoding, the CRS property, the bbox columns of a WKB table) and then
// every live file of its version, cfg.Parallelism at a time, as its
// format reads them (an Iceberg file whole, a Delta file's live rows).
// The report names the table t.Name and holds its version as
// SnapshotID.
func Check(ctx context.Context, t table.Table, cfg validate.Config) (*validate.TableReport, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	src, ok := t.Format.(Source)
	if !ok {
		return nil, fmt.Errorf("validate %s: its format does not support validation", t.Name)
	}
	rep := &validate.TableReport{Table: t.Name, SnapshotID: t.Version, Metadata: validate.NewReport(cfg), Total: validate.NewReport(cfg)}
	cols, props, err := src.CheckColumns(cfg.Column)
	if err != nil {
		rep.ColumnProblem(err)
		return rep, nil
	}
	checkTableMetadata(&rep.Metadata, cols, props, cfg)
	rep.Total.Merge(rep.Metadata)
	paths := make([]string, len(t.Files))
	for i, f := range t.Files {
		if paths[i], err = src.ReportPath(f); err != nil {
			return nil, err
		}
	}
	err = validateEach(ctx, rep, paths, cfg, func(i int) (*validate.Report, error) {
		return src.CheckFile(ctx, t.Files[i], cols, cfg)
	})
	if err != nil {
		return nil, err
	}
	for _, f := range rep.Files {
		rep.Total.Merge(f.Report)
	}
	return rep, nil
}

// validateEach validates the files at paths with check, cfg.Parallelism at
// a time, into rep.Files in paths order. check's errors name the file.
func validateEach(ctx context.Context, rep *validate.TableReport, paths []string, cfg validate.Config, check func(i int) (*validate.Report, error)) error {
	rep.Files = make([]validate.FileReport, len(paths))
	errs := make([]error, len(paths))
	sem := make(chan struct{}, max(cfg.Parallelism, 1))
	var wg sync.WaitGroup
	for i, path := range paths {
		rep.Files[i].Path = path
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if ctx.Err() != nil {
				errs[i] = context.Cause(ctx)
				return
			}
			start := time.Now()
			r, err := check(i)
			if err != nil {
				errs[i] = err
				return
			}
			rep.Files[i].Report = *r
			cfg.Log().Info("validate file done", "path", path, "rows", r.Rows, "violations", r.Violations(), "duration", time.Since(start))
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// checkTableMetadata checks what the table declares about its geometry.
func checkTableMetadata(r *validate.Report, cols spatial.Columns, props map[string]string, cfg validate.Config) {
	if enc := props[spatial.PropGeometryEncoding]; enc != "" && enc != cols.Encoding {
		r.Add(-1, validate.CodeColumn, fmt.Sprintf("property %s is %q but column %q holds %q", spatial.PropGeometryEncoding, enc, cols.Geometry, cols.Encoding))
	}
	if crs := props[spatial.PropCRS]; crs != "" && cols.Encoding == spatial.EncodingIcebergGeometry {
		if n, err := spatial.NormalizeCRS(crs); err != nil || n != cols.CRS {
			r.Add(-1, validate.CodeCRSMismatch, fmt.Sprintf("property %s is %s but the geometry type's CRS is %s", spatial.PropCRS, spatial.QuoteExcerpt(crs), spatial.Excerpt(cols.CRS)))
		}
	}
	if cfg.CRS != "" && cols.CRS != cfg.CRS {
		r.Add(-1, validate.CodeCRSMismatch, fmt.Sprintf("table CRS %s differs from the expected %s", spatial.Excerpt(cols.CRS), spatial.Excerpt(cfg.CRS)))
	}
	if cols.Encoding == spatial.EncodingWKB && cfg.RequireBBox && !cols.HasBBox() && cols.Covering == "" {
		var missing []string
		for i, n := range spatial.BBoxColumns {
			if cols.BBox[i] == "" {
				missing = append(missing, n)
			}
		}
		r.Add(-1, validate.CodeBBoxMissing, fmt.Sprintf("table lacks double bbox columns %v", missing))
	}
}
