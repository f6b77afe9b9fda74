package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/geocompact/geocompact/delta"
	"github.com/geocompact/geocompact/ingest"
	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/table/catalogs"
)

// ErrDeltaBBoxColumns is returned for a Delta table without the four bbox
// columns spatial.BBoxColumns, which bench plans Delta windows on.
var ErrDeltaBBoxColumns = errors.New("bench: a Delta table is measured by its bbox columns " + strings.Join(spatial.BBoxColumns[:], ", ") + ", and this one has none")

// ErrDeltaKeep is returned for Config.Keep on a Delta table: its scratch
// copies live in a temporary catalog that is always removed.
var ErrDeltaKeep = errors.New("bench: scratch copies of a Delta table live in a temporary catalog and cannot be kept")

// deltaScratchNS and deltaScratchBase name the scratch copies of a Delta
// table in their temporary catalog.
const (
	deltaScratchNS   = "bench"
	deltaScratchBase = deltaScratchNS + ".delta"
)

// DeltaBBoxAdvice ends the error of a Delta table without bbox columns,
// in library terms.
const DeltaBBoxAdvice = "write them with the rows (an ingest adds them) or measure the table's metrics instead"

// RunDelta measures cfg's layouts of the Delta table tbl (named name in
// the report, its location) as Run measures an Iceberg table's: the rows
// of its latest version (deletion vectors applied, column mapping
// honoured) are copied in arrival order into scratch Iceberg tables in a
// temporary catalog (removed afterwards) and rewritten by the same engine,
// so every layout but Current gives the figures Run gives for an Iceberg
// table of the same rows. Current is the Delta files as they are, planned
// by their own statistics: a file is opened for a window its bbox
// columns' minimum and maximum values meet, as metrics --delta counts. The
// Delta table is only read. cfg.Table is not used; cfg.Keep is refused.
func RunDelta(ctx context.Context, tbl *delta.Table, name string, cfg Config) (rep *Report, err error) {
	if cfg.Keep {
		return nil, ErrDeltaKeep
	}
	start := time.Now()
	src, err := deltaSource(ctx, tbl, name)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "geocompact-bench-")
	if err != nil {
		return nil, fmt.Errorf("bench %s: scratch catalog: %w", name, err)
	}
	defer os.RemoveAll(dir)
	cat, err := catalogs.Open(ctx, catalogs.Spec{Warehouse: dir})
	if err != nil {
		return nil, fmt.Errorf("bench %s: scratch catalog: %w", name, err)
	}
	if c, ok := cat.(io.Closer); ok {
		defer c.Close()
	}
	if err := cat.CreateNamespace(ctx, table.Identifier{deltaScratchNS}, nil); err != nil {
		return nil, fmt.Errorf("bench %s: scratch catalog: %w", name, err)
	}
	return run(ctx, cat, cfg, src, start)
}

// deltaSource reads the latest version of the Delta table tbl.
func deltaSource(ctx context.Context, tbl *delta.Table, name string) (*source, error) {
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		return nil, fmt.Errorf("bench %s: %w", name, err)
	}
	if _, err := snap.ArrowSchema(); err != nil {
		return nil, fmt.Errorf("bench %s: %w", name, err)
	}
	dcols, _ := snap.SpatialColumns("") // the bbox columns suffice
	if !dcols.HasBBox() {
		return nil, fmt.Errorf("bench %s: %w: %s", name, ErrDeltaBBoxColumns, DeltaBBoxAdvice)
	}
	scratch, err := deltaScratch(snap, dcols)
	if err != nil {
		return nil, fmt.Errorf("bench %s: %w", name, err)
	}
	cols, err := columnsOf(scratch.schema, scratch.props)
	if err != nil {
		return nil, fmt.Errorf("bench %s: %w", name, err)
	}
	files, err := readDeltaFiles(ctx, tbl, snap, cols, dcols)
	if err != nil {
		return nil, err
	}
	src := &source{name: name, scratchBase: deltaScratchBase, cols: cols, files: files, plan: statsPlanner(files), scratch: scratch}
	src.arrival = func(ctx context.Context) (rowReader, ArrivalSource, error) {
		adds, order, err := deltaArrival(ctx, tbl, snap, files)
		if err != nil {
			return nil, "", err
		}
		return deltaRows(tbl, snap, adds), order, nil
	}
	return src, nil
}

// deltaScratch is the spec of an Iceberg copy of snap's table: its
// logical columns, identity partitions on its partition columns, the
// properties geocompact gives a spatial table it creates, and the table's
// own configuration but Delta's (delta.*), as an Iceberg copy keeps its
// source's properties.
func deltaScratch(snap *delta.Snapshot, cols spatial.Columns) (scratchSpec, error) {
	asc, err := snap.ArrowSchema()
	if err != nil {
		return scratchSpec{}, err
	}
	sc, err := table.ArrowSchemaToIcebergWithFreshIDs(asc, true)
	if err != nil {
		return scratchSpec{}, fmt.Errorf("derive an Iceberg schema: %w", err)
	}
	spec, err := ingest.ParsePartitionSpec(strings.Join(snap.Metadata.PartitionColumns, ", "), sc)
	if err != nil {
		return scratchSpec{}, err
	}
	props := iceberg.Properties{}
	for k, v := range snap.Metadata.Configuration {
		if !strings.HasPrefix(k, "delta.") {
			props[k] = v
		}
	}
	props[table.PropertyFormatVersion] = "2"
	if cols.Geometry != "" { // where the geometry is, for the engine's checks
		cols.Encoding = spatial.EncodingWKB
		for k, v := range ingest.SpatialTableProps(2, cols) {
			props[k] = v
		}
	}
	return scratchSpec{schema: sc, spec: spec, version: 2, props: props}, nil
}

// readDeltaFiles lists snap's live files, each with its bound from its
// own statistics (dcols' minimum and maximum values, Snapshot.FileBound)
// and the bbox of each live row (deletion vectors applied), projecting
// only the bbox columns.
func readDeltaFiles(ctx context.Context, tbl *delta.Table, snap *delta.Snapshot, cols spatialColumns, dcols spatial.Columns) ([]fileInfo, error) {
	files := make([]fileInfo, len(snap.Files))
	for i, add := range snap.Files {
		f := &files[i]
		p, err := add.DecodedPath()
		if err != nil {
			return nil, err
		}
		f.path, f.size = p, add.Size
		f.bound, f.hasBound = snap.FileBound(add, dcols)
		if !f.hasBound {
			f.bound = everywhere
		}
		err = tbl.ReadFile(ctx, snap, add, delta.ReadOptions{Columns: cols.names()}, func(rec arrow.RecordBatch) error {
			var rerr error
			f.rows, rerr = appendRowBounds(f.rows, rec, cols)
			return rerr
		})
		if err != nil {
			return nil, err
		}
		gs, err := openRowGroups(func(p string) (delta.File, error) { return tbl.Store.Open(ctx, p) }, p)
		if err != nil {
			return nil, err
		}
		f.rowGroups, f.groups = len(gs), boundRowGroups(gs, f.rows)
		f.count = int64(len(f.rows))
		if st, err := add.ParsedStats(); err == nil && st != nil {
			f.count = st.NumRecords // before deletion vectors, as Iceberg's record counts
		}
	}
	return files, nil
}

// errStopRead ends a read the consumer stopped.
var errStopRead = errors.New("bench: read stopped")

// deltaRows reads the live rows of adds of tbl, in order, with snap's
// schema: the reader a Delta rewrite reads with (deletion vectors
// applied, column mapping honoured, partition values filled in).
func deltaRows(tbl *delta.Table, snap *delta.Snapshot, adds []*delta.Add) rowReader {
	return func(ctx context.Context) (*arrow.Schema, iter.Seq2[arrow.RecordBatch, error], error) {
		sc, err := snap.ArrowSchema()
		if err != nil {
			return nil, nil, err
		}
		return sc, func(yield func(arrow.RecordBatch, error) bool) {
			for _, add := range adds {
				err := tbl.ReadFile(ctx, snap, add, delta.ReadOptions{}, func(rec arrow.RecordBatch) error {
					rec.Retain()
					if !yield(rec, nil) {
						return errStopRead
					}
					return nil
				})
				if errors.Is(err, errStopRead) {
					return
				}
				if err != nil {
					yield(nil, err)
					return
				}
			}
		}, nil
	}
}
