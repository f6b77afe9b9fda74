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

	"github.com/geocompact/geocompact/internal/remedy"
	"github.com/geocompact/geocompact/internal/rowgroup"
	"github.com/geocompact/geocompact/spatial"
	format "github.com/geocompact/geocompact/table"
	"github.com/geocompact/geocompact/table/catalogs"
	"github.com/geocompact/geocompact/table/icebergtable"
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

// RemedyBBoxColumns: write a Delta table's bbox columns with its rows, or
// measure its metrics instead (ErrDeltaBBoxColumns).
var RemedyBBoxColumns = remedy.Define("bench.bbox-columns", func(remedy.Advice) string {
	return "write them with the rows (an ingest adds them) or measure the table's metrics instead"
})

// statsFormat is what bench asks of a table format whose files it
// measures by their own statistics: every format but Iceberg, whose scan
// planning bench runs itself. table/deltatable implements it.
type statsFormat interface {
	// PartitionColumns are the table's partition columns, in order.
	PartitionColumns() []string
	// OpenFile opens the live file f, for its footer.
	OpenFile(ctx context.Context, f format.PlanFile) (format.File, error)
	// Arrival returns files whose rows, read in order (Format.Read), are
	// the table's live rows in arrival order, and whether that order
	// comes from the table's history (else the live files are given in
	// the order they were added).
	Arrival(ctx context.Context, rows int64) ([]format.PlanFile, bool, error)
}

// Measure measures cfg's layouts of t, as Run does for an Iceberg table
// named by cfg.Table. A table of another format (a Delta table) is
// measured by its files' statistics: the rows of its version (deletion
// vectors applied, column mapping honoured) are copied in arrival order
// into scratch Iceberg tables in a temporary catalog (removed afterwards)
// and rewritten by the same engine, so every layout but Current gives the
// figures Run gives for an Iceberg table of the same rows. Current is the
// table's files as they are, planned by their own statistics: a file is
// opened for a window its bbox columns' minimum and maximum values meet,
// as metrics counts. The table is only read. For such a table cfg.Table
// is not used and cfg.Keep is refused.
func Measure(ctx context.Context, t format.Table, cfg Config) (*Report, error) {
	if it, ok := t.Format.(*icebergtable.Table); ok {
		cfg.Table = t.Name
		return Run(ctx, it.Catalog, cfg)
	}
	if cfg.Keep {
		return nil, ErrDeltaKeep
	}
	start := time.Now()
	src, err := statsSource(ctx, t)
	if err != nil {
		return nil, err
	}
	name := t.Name
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

// statsSource reads t, whose format is a statsFormat.
func statsSource(ctx context.Context, t format.Table) (*source, error) {
	sf, ok := t.Format.(statsFormat)
	if !ok {
		return nil, fmt.Errorf("bench %s: its format cannot be measured", t.Name)
	}
	if t.Schema == nil {
		return nil, fmt.Errorf("bench %s: the table's schema is unknown", t.Name)
	}
	dcols, _, _ := t.Spatial() // the bbox columns suffice
	if !dcols.HasBBox() {
		return nil, fmt.Errorf("bench %s: %w", t.Name, &remedy.Error{Err: ErrDeltaBBoxColumns, Advice: remedy.Advice{Kind: RemedyBBoxColumns}})
	}
	scratch, err := statsScratch(t.Schema, sf.PartitionColumns(), t.Properties, dcols)
	if err != nil {
		return nil, fmt.Errorf("bench %s: %w", t.Name, err)
	}
	cols, err := columnsOf(scratch.schema, scratch.props)
	if err != nil {
		return nil, fmt.Errorf("bench %s: %w", t.Name, err)
	}
	files, err := readStatsFiles(ctx, t, sf, cols)
	if err != nil {
		return nil, err
	}
	src := &source{name: t.Name, scratchBase: deltaScratchBase, cols: cols, files: files, plan: statsPlanner(files), scratch: scratch}
	src.arrival = func(ctx context.Context) (rowReader, ArrivalSource, error) {
		var rows int64
		for _, f := range files {
			rows += int64(len(f.rows))
		}
		arrived, history, err := sf.Arrival(ctx, rows)
		if err != nil {
			return nil, "", err
		}
		order := ArrivalFiles
		if history {
			order = ArrivalHistory
		}
		return formatRows(t, arrived), order, nil
	}
	return src, nil
}

// statsScratch is the spec of an Iceberg copy of a table of schema asc
// partitioned by the columns parts: its columns, identity partitions on
// parts, the properties geocompact gives a spatial table it creates, and
// the table's own properties but Delta's (delta.*), as an Iceberg copy
// keeps its source's properties.
func statsScratch(asc *arrow.Schema, parts []string, tprops map[string]string, cols spatial.Columns) (scratchSpec, error) {
	sc, err := table.ArrowSchemaToIcebergWithFreshIDs(asc, true)
	if err != nil {
		return scratchSpec{}, fmt.Errorf("derive an Iceberg schema: %w", err)
	}
	spec, err := icebergtable.ParsePartitionSpec(strings.Join(parts, ", "), sc)
	if err != nil {
		return scratchSpec{}, err
	}
	props := iceberg.Properties{}
	for k, v := range tprops {
		if !strings.HasPrefix(k, "delta.") {
			props[k] = v
		}
	}
	props[table.PropertyFormatVersion] = "2"
	if cols.Geometry != "" { // where the geometry is, for the engine's checks
		cols.Encoding = spatial.EncodingWKB
		for k, v := range icebergtable.SpatialTableProps(2, cols) {
			props[k] = v
		}
	}
	return scratchSpec{schema: sc, spec: spec, version: 2, props: props}, nil
}

// readStatsFiles lists t's live files, each with its bound from its own
// statistics and the bbox of each live row (deletes applied), projecting
// only the bbox columns, and its row groups.
func readStatsFiles(ctx context.Context, t format.Table, sf statsFormat, cols spatialColumns) ([]fileInfo, error) {
	files := make([]fileInfo, len(t.Files))
	for i, pf := range t.Files {
		f := &files[i]
		f.path, f.size = pf.Path, pf.Size
		f.bound, f.hasBound = pf.Bound, pf.HasBound
		if !f.hasBound {
			f.bound = everywhere
		}
		_, recs, err := t.Read(ctx, nil, []format.PlanFile{pf}, cols.names())
		if err != nil {
			return nil, err
		}
		for rec, err := range recs {
			if err != nil {
				return nil, err
			}
			f.rows, err = appendRowBounds(f.rows, rec, cols)
			rec.Release()
			if err != nil {
				return nil, err
			}
		}
		open := func(string) (format.File, error) { return sf.OpenFile(ctx, pf) }
		if f.rg, err = rowgroup.ReadFile(open, pf.Path, rowgroup.Columns{}); err != nil {
			return nil, err
		}
		f.rg.Size = f.size
		f.rg.BoundRows(f.rows)
		f.count = int64(len(f.rows))
		if pf.Records > 0 {
			f.count = pf.Records // before deletes, as Iceberg's record counts
		}
	}
	return files, nil
}

// formatRows reads the rows of files of t, in order, as a rewrite reads
// them (deletes applied, column mapping honoured, partition values filled
// in).
func formatRows(t format.Table, files []format.PlanFile) rowReader {
	return func(ctx context.Context) (*arrow.Schema, iter.Seq2[arrow.RecordBatch, error], error) {
		return t.Read(ctx, nil, files, nil)
	}
}
