// Package tablecheck validates whole tables, Iceberg and Delta, with
// validate's file checks: the table's spatial metadata, then every live
// file.
package tablecheck

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"

	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/spatial/icebergspatial"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/validate"
)

// Table validates tbl: its geometry metadata (the geometry column and
// encoding, the CRS property, the bbox columns of a WKB table) and then
// every data file of the current snapshot, cfg.Parallelism at a time,
// read through the table's FileIO. Files are checked against the table's
// geometry column and CRS. A file that cannot be opened is an error; a
// corrupt one is a file.corrupt finding.
func Table(ctx context.Context, tbl *table.Table, cfg validate.Config) (*validate.TableReport, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	rep := &validate.TableReport{Table: strings.Join(tbl.Identifier(), "."), Metadata: validate.NewReport(cfg), Total: validate.NewReport(cfg)}
	props := maps.Clone(map[string]string(tbl.Properties()))
	if props == nil {
		props = map[string]string{}
	}
	cols, err := icebergspatial.Columns(tbl.Schema(), props, cfg.Column)
	if err != nil {
		rep.ColumnProblem(err)
		return rep, nil
	}
	checkTableMetadata(&rep.Metadata, cols, props, cfg)
	rep.Total.Merge(rep.Metadata)

	snap := tbl.CurrentSnapshot()
	if snap == nil {
		return rep, nil
	}
	rep.SnapshotID = snap.SnapshotID
	tasks, err := catalogs.PlanFiles(ctx, tbl.Scan())
	if err != nil {
		return nil, fmt.Errorf("plan files of %s: %w", rep.Table, err)
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, fmt.Errorf("open file IO of %s: %w", rep.Table, err)
	}
	// Files are read as the table defines them: its geometry column, and
	// its CRS in place of GeoParquet metadata iceberg-go does not write.
	fileCfg := cfg
	fileCfg.Column = cols.Geometry
	fileCfg.Props = maps.Clone(props)
	fileCfg.Props[spatial.PropCRS] = cols.CRS
	fileCfg.CRS = cols.CRS

	if err := validateFiles(ctx, rep, fsys, tasks, fileCfg); err != nil {
		return nil, err
	}
	for _, f := range rep.Files {
		rep.Total.Merge(f.Report)
	}
	return rep, nil
}

// validateFiles validates the tasks' data files, par at a time, into
// rep.Files in task order.
func validateFiles(ctx context.Context, rep *validate.TableReport, fsys iceio.IO, tasks []table.FileScanTask, cfg validate.Config) error {
	paths := make([]string, len(tasks))
	for i, task := range tasks {
		paths[i] = task.File.FilePath()
	}
	return validateEach(ctx, rep, paths, cfg, func(i int) (*validate.Report, error) {
		f, err := fsys.Open(paths[i])
		if err != nil {
			return nil, fmt.Errorf("open %s: %w", paths[i], err)
		}
		defer f.Close()
		r, err := validate.Reader(ctx, f, cfg)
		if err != nil {
			return nil, fmt.Errorf("validate %s: %w", paths[i], err)
		}
		return r, nil
	})
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
