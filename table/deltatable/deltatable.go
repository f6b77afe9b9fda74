// Package deltatable rewrites Delta tables with the engine: it describes
// a Delta table's latest version as an engine.FormatTable, whose Format
// reads live rows (deletion vectors applied), writes Parquet files with
// per-file statistics, and commits an OPTIMIZE (remove and add actions
// with dataChange=false) with Delta's put-if-absent of the next version.
// The plan, layouts, sorts, validation and verification are the engine's.
package deltatable

import (
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/engine"
	"github.com/geocompact/geocompact/spatial"
)

// Rewrite compacts the Delta table at location (a directory, file: URL or
// s3:// URL) as engine.Rewrite compacts an Iceberg table: an OPTIMIZE,
// binpack or clustered by the request's layout or the one the table
// records in its geocompact.layout property.
func Rewrite(ctx context.Context, location string, req engine.Request) (*engine.Result, error) {
	t, err := delta.Open(ctx, location)
	if err != nil {
		return nil, err
	}
	ft, err := Open(ctx, t, location, req.DryRun)
	if err != nil {
		return nil, err
	}
	return engine.RewriteTable(ctx, ft, req)
}

// Open describes the latest version of t, called name in messages, for
// engine.RewriteTable. Unless dryRun, a table this package cannot write
// (a protocol or feature it does not honour) is refused here, before
// anything is written.
func Open(ctx context.Context, t *delta.Table, name string, dryRun bool) (engine.FormatTable, error) {
	snap, err := t.Snapshot(ctx)
	if err != nil {
		return engine.FormatTable{}, err
	}
	if !dryRun {
		if err := delta.CheckWrite(snap.Protocol, snap.Metadata); err != nil {
			return engine.FormatTable{}, fmt.Errorf("table %s: %w", name, err)
		}
	}
	sc, err := snap.ArrowSchema()
	if err != nil {
		return engine.FormatTable{}, err
	}
	f := &format{t: t, snap: snap, name: name, sc: sc, props: properties(snap)}
	f.cols, f.colsErr = snap.SpatialColumns("")
	files, err := f.planFiles()
	if err != nil {
		return engine.FormatTable{}, err
	}
	var columns []string
	for _, fl := range snap.Schema.Fields {
		columns = append(columns, fl.Name)
	}
	return engine.FormatTable{Name: name, FormatName: engine.FormatDelta, Properties: f.props, Columns: columns, Schema: sc, Files: files, Format: f, Scope: f.scope}, nil
}

// properties are the table's configuration, with Delta's target file
// size standing for the engine's when the table sets only Delta's.
func properties(s *delta.Snapshot) map[string]string {
	props := map[string]string{}
	for k, v := range s.Metadata.Configuration {
		props[k] = v
	}
	if v, ok := props[delta.PropTargetFileSize]; ok && props[engine.PropTargetFileSize] == "" {
		props[engine.PropTargetFileSize] = v
	}
	return props
}

// format is a Delta table at the version a rewrite planned on.
type format struct {
	t       *delta.Table
	snap    *delta.Snapshot
	name    string
	sc      *arrow.Schema // logical, as rows are read
	props   map[string]string
	cols    spatial.Columns
	colsErr error
}

// planFiles describes the snapshot's live files for the planner.
func (f *format) planFiles() ([]engine.PlanFile, error) {
	out := make([]engine.PlanFile, 0, len(f.snap.Files))
	root := f.t.Store.TableRoot()
	for _, add := range f.snap.Files {
		p, _, err := root.Canonical(add.Path)
		if err != nil {
			return nil, err
		}
		stats, err := add.ParsedStats()
		if err != nil {
			return nil, fmt.Errorf("stats of %s: %w", p, err)
		}
		pf := engine.PlanFile{Path: p, Size: add.Size, Partition: f.snap.PartitionPath(add), File: add}
		if add.DeletionVector != nil {
			pf.DeleteFiles = 1
		}
		if stats != nil {
			pf.Records = stats.NumRecords
			pf.Bound, pf.HasBound = f.snap.FileBound(add, f.cols)
		}
		out = append(out, pf)
	}
	return out, nil
}

func add(f engine.PlanFile) *delta.Add { return f.File.(*delta.Add) }

func (f *format) Read(ctx context.Context, _, files []engine.PlanFile, cols []string) (*arrow.Schema, iter.Seq2[arrow.RecordBatch, error], error) {
	adds := make([]*delta.Add, len(files))
	for i, pf := range files {
		adds[i] = add(pf)
	}
	sc, idx, err := project(f.sc, cols)
	if err != nil {
		return nil, nil, err
	}
	return sc, f.read(ctx, adds, sc, idx), nil
}

// project returns the schema of sc's columns cols (sc itself for nil)
// and their indices (nil for all).
func project(sc *arrow.Schema, cols []string) (*arrow.Schema, []int, error) {
	if cols == nil {
		return sc, nil, nil
	}
	idx := make([]int, len(cols))
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		is := sc.FieldIndices(c)
		if len(is) != 1 {
			return nil, nil, fmt.Errorf("read: the table has no column %q", c)
		}
		idx[i], fields[i] = is[0], sc.Field(is[0])
	}
	return arrow.NewSchema(fields, nil), idx, nil
}

func (f *format) WriteSchema(_ []engine.PlanFile, sc *arrow.Schema) (*arrow.Schema, error) {
	return sc, nil
}

func (f *format) ReadBack(ctx context.Context, _ []engine.PlanFile, written []engine.OutFile) (iter.Seq2[arrow.RecordBatch, error], error) {
	adds := make([]*delta.Add, len(written))
	for i, o := range written {
		adds[i] = o.File.(*delta.Add)
	}
	return f.read(ctx, adds, f.sc, nil), nil
}

// Remove deletes files a failed rewrite wrote, by their table-relative
// names; a name that does not resolve inside the table (Root.Canonical) is
// refused, never deleted.
func (f *format) Remove(ctx context.Context, paths []string) error {
	var errs []error
	root := f.t.Store.TableRoot()
	for _, raw := range paths {
		p, inside, err := root.Canonical(delta.EncodePath(raw))
		if err == nil && !inside {
			err = fmt.Errorf("outside the table; not deleted")
		}
		if err == nil {
			err = f.t.Store.Delete(ctx, p)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", raw, err))
		}
	}
	return errors.Join(errs...)
}

// BrokenInput returns err: reading a Delta file names it already.
func (f *format) BrokenInput(_ context.Context, _ []engine.PlanFile, err error) error { return err }

func (f *format) Spatial() (spatial.Columns, map[string]string, error) {
	return f.cols, f.props, f.colsErr
}
