package bench

import (
	"context"
	"fmt"
	"iter"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/table/catalogs"
)

// source is the table a measurement reads, whatever its format: its
// current files with their rows' boxes, how planning opens them for a
// window, its rows in arrival order, and what its scratch copies (Iceberg
// tables, which every layout but Current is written into) are made of.
type source struct {
	// name names the source in the report; scratchBase is the "ns.t"
	// its scratch copies are named after (ScratchName).
	name, scratchBase string
	// cols are the spatial columns of the scratch copies' schema (the
	// source's own for an Iceberg table).
	cols  spatialColumns
	files []fileInfo
	// plan plans a window on the current files.
	plan planner
	// arrival returns the current rows in arrival order and where that
	// order came from.
	arrival func(ctx context.Context) (rowReader, ArrivalSource, error)
	scratch scratchSpec
}

// planner returns the paths of the files planning opens for window w,
// the wi-th.
type planner func(ctx context.Context, wi int, w spatial.Bound) ([]string, error)

// rowReader streams rows, each batch owned by the consumer.
type rowReader func(ctx context.Context) (*arrow.Schema, iter.Seq2[arrow.RecordBatch, error], error)

// scratchSpec is what a scratch copy is created with: a schema, a
// partition spec, a format version and properties.
type scratchSpec struct {
	schema  *iceberg.Schema
	spec    iceberg.PartitionSpec
	version int
	props   iceberg.Properties
}

// icebergSource reads the Iceberg table name of cat.
func icebergSource(ctx context.Context, cat catalog.Catalog, name string) (*source, error) {
	tbl, err := catalogs.LoadTable(ctx, cat, name)
	if err != nil {
		return nil, err
	}
	cols, err := columnsOf(tbl.Schema(), tbl.Properties())
	if err != nil {
		return nil, fmt.Errorf("bench %s: %w", name, err)
	}
	files, err := readFiles(ctx, tbl, cols)
	if err != nil {
		return nil, err
	}
	src := &source{name: name, scratchBase: name, cols: cols, files: files, plan: icebergPlanner(tbl, cols), scratch: scratchOf(tbl)}
	src.arrival = func(ctx context.Context) (rowReader, ArrivalSource, error) {
		current, err := catalogs.PlanFiles(ctx, tbl.Scan())
		if err != nil {
			return nil, "", fmt.Errorf("plan %s: %w", name, err)
		}
		tasks, arrival, err := arrivalTasks(ctx, tbl, current)
		if err != nil {
			return nil, "", err
		}
		return icebergRows(tbl, tasks), arrival, nil
	}
	return src, nil
}

// scratchOf is the scratch spec of a copy of tbl: its schema, partition
// spec, format version and properties (not its sort order: a table sort
// order would reorder the copied batches).
func scratchOf(tbl *table.Table) scratchSpec {
	return scratchSpec{schema: tbl.Schema(), spec: tbl.Spec(), version: tbl.Metadata().Version(), props: tbl.Properties()}
}

// icebergRows reads the rows of tasks of tbl, in order, deletes applied.
func icebergRows(tbl *table.Table, tasks []table.FileScanTask) rowReader {
	return func(ctx context.Context) (*arrow.Schema, iter.Seq2[arrow.RecordBatch, error], error) {
		if _, err := footers(ctx, tbl, tasks); err != nil {
			return nil, nil, err
		}
		sc, recs, err := tbl.Scan().ReadTasks(ctx, tasks)
		if err != nil {
			return nil, nil, fmt.Errorf("read %s: %w", tbl.Identifier(), err)
		}
		return sc, recs, nil
	}
}

// icebergPlanner plans windows with iceberg-go's scan planning on tbl.
func icebergPlanner(tbl *table.Table, cols spatialColumns) planner {
	return func(ctx context.Context, wi int, w spatial.Bound) ([]string, error) {
		tasks, err := planWindow(ctx, tbl, cols, wi, w)
		if err != nil {
			return nil, err
		}
		paths := make([]string, len(tasks))
		for i, t := range tasks {
			paths[i] = t.File.FilePath()
		}
		return paths, nil
	}
}

// statsPlanner plans windows by the files' own bounds, as a reader
// pruning on per-file statistics does: a file is opened when its bound
// meets the window (touching counts), and always when it has no bound.
func statsPlanner(files []fileInfo) planner {
	return func(_ context.Context, _ int, w spatial.Bound) ([]string, error) {
		var paths []string
		for _, f := range files {
			if !f.hasBound || f.bound.Intersects(w) {
				paths = append(paths, f.path)
			}
		}
		return paths, nil
	}
}
