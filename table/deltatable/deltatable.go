// Package deltatable opens Delta tables for the engine: it describes a
// Delta table's latest version as a table.Table, whose Format
// reads live rows (deletion vectors applied), writes Parquet files with
// per-file statistics, and commits an OPTIMIZE (remove and add actions
// with dataChange=false) with Delta's put-if-absent of the next version.
// The plan, layouts, sorts, validation and verification are the engine's.
// For a maintenance run, its Format also takes the census of the log's
// latest version and vacuums the table (maintain.go).
package deltatable

import (
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/layouts"
)

// OpenLocation opens the Delta table at location (a directory, file: URL
// or s3:// URL), named by it in messages, as Open does: engine.Rewrite
// then runs an OPTIMIZE, binpack or clustered by the request's layout or
// the one the table records in its geocompact.layout property.
func OpenLocation(ctx context.Context, location string, use table.Use) (table.Table, error) {
	t, err := delta.Open(ctx, location)
	if err != nil {
		return table.Table{}, err
	}
	return Open(ctx, t, location, use)
}

// Open describes the latest version of t, called name in messages, for
// a rewrite. For table.ForWrite, a table this package cannot write
// (a protocol or feature it does not honour) is refused here, before
// anything is written.
func Open(ctx context.Context, t *delta.Table, name string, use table.Use) (table.Table, error) {
	snap, err := t.Snapshot(ctx)
	if err != nil {
		return table.Table{}, err
	}
	if use == table.ForWrite {
		if err := delta.CheckWrite(snap.Protocol, snap.Metadata); err != nil {
			return table.Table{}, fmt.Errorf("table %s: %w", name, err)
		}
	}
	sc, err := snap.ArrowSchema()
	if err != nil {
		return table.Table{}, err
	}
	f := &format{t: t, snap: snap, name: name, sc: sc, props: properties(snap)}
	f.cols, f.colsErr = snap.SpatialColumns("")
	files, err := f.planFiles()
	if err != nil {
		return table.Table{}, err
	}
	var columns []string
	for _, fl := range snap.Schema.Fields {
		columns = append(columns, fl.Name)
	}
	d := table.Table{Format: f, Name: name, FormatName: table.FormatDelta, Version: snap.Version, Properties: f.props, Columns: columns, Schema: sc, Files: files,
		Layout: func() (layouts.Record, error) {
			rec, _, err := layouts.FromProperties(name, f.props)
			return rec, err
		},
		Scope: func(text string) (table.Scoper, error) {
			return func(_ context.Context, files []table.PlanFile) ([]table.PlanFile, error) { return f.scope(files, text) }, nil
		}}
	if f.colsErr == nil {
		d.Geometry = f.cols.Geometry
	}
	if len(files) == 0 {
		d.Empty = "the table has no data files: there is nothing to rewrite"
	}
	return d, nil
}

// properties are the table's configuration, with Delta's target file
// size standing for the engine's when the table sets only Delta's.
func properties(s *delta.Snapshot) map[string]string {
	props := map[string]string{}
	for k, v := range s.Metadata.Configuration {
		props[k] = v
	}
	if v, ok := props[delta.PropTargetFileSize]; ok && props[table.PropTargetFileSize] == "" {
		props[table.PropTargetFileSize] = v
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
func (f *format) planFiles() ([]table.PlanFile, error) {
	out := make([]table.PlanFile, 0, len(f.snap.Files))
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
		pf := table.PlanFile{Path: p, Size: add.Size, Partition: f.snap.PartitionPath(add), File: add}
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

func add(f table.PlanFile) *delta.Add { return f.File.(*delta.Add) }

func (f *format) Read(ctx context.Context, _, files []table.PlanFile, cols []string) (*arrow.Schema, iter.Seq2[arrow.RecordBatch, error], error) {
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

func (f *format) WriteSchema(_ []table.PlanFile, sc *arrow.Schema) (*arrow.Schema, error) {
	return sc, nil
}

func (f *format) ReadBack(ctx context.Context, _ []table.PlanFile, written []table.OutFile) (iter.Seq2[arrow.RecordBatch, error], error) {
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
func (f *format) BrokenInput(_ context.Context, _ []table.PlanFile, err error) error { return err }

func (f *format) Spatial() (spatial.Columns, map[string]string, error) {
	return f.cols, f.props, f.colsErr
}
