// Package geowrite writes Iceberg data files as GeoParquet: the files a
// table write produces carry GeoParquet 1.1 "geo" metadata stating the
// geometry types and bbox of their rows, and the data files record the
// files' final sizes. Sink cuts a stream of batches into files of given
// row counts, several written at once. It also assigns first row ids to
// files appended to a v3 table. It knows nothing of rewrites: the
// engine's groups, ingest and bench's generator call it.
package geowrite

import (
	"context"
	"fmt"
	"iter"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	// Parquet pages compressed by encoders of a page's window.
	_ "github.com/geocompact/geocompact/internal/zstdcodec"
	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/spatial/icebergspatial"
	format "github.com/geocompact/geocompact/table"
)

// Records is table.WriteRecords writing GeoParquet: every data file
// it writes carries GeoParquet 1.1 "geo" metadata for the table's geometry
// column (see spatial.GeoStats.Metadata), with the geometry types and bbox
// of the rows written. A table without a geometry column, or rows without
// it, are written as table.WriteRecords writes them.
//
// iceberg-go fixes a file's key-value metadata when it opens the file, and
// the rows decide the bbox, so the metadata goes in as the footer is
// written: the table's FileIO is wrapped so each file's writer is a
// spatial.FooterWriter, and the returned data files carry the final sizes.
// The rows' types and extent are those of the call: when one call writes
// several files (a partitioned table, or rolling at the target size), each
// file states the call's types and extent, which contain its own.
func Records(ctx context.Context, tbl *table.Table, sc *arrow.Schema, rows iter.Seq2[arrow.RecordBatch, error], opts ...table.WriteRecordOption) iter.Seq2[iceberg.DataFile, error] {
	cols, err := icebergspatial.Columns(tbl.Schema(), tbl.Properties(), "")
	gi := sc.FieldIndices(cols.Geometry)
	if err != nil || len(gi) != 1 {
		return table.WriteRecords(ctx, tbl, sc, rows, opts...)
	}
	g := &geoWrite{cols: cols, col: gi[0], stats: spatial.NewGeoStats(), files: map[string]*spatial.FooterWriter{}}
	g.annotate, g.crs = parquetGeometry(tbl.Schema(), cols.Geometry)
	wt := table.New(tbl.Identifier(), tbl.Metadata(), tbl.MetadataLocation(), g.fs(tbl), nil)
	return func(yield func(iceberg.DataFile, error) bool) {
		for df, err := range table.WriteRecords(ctx, wt, sc, g.observe(rows), opts...) {
			if err == nil {
				df, err = g.sized(tbl, df)
			}
			if !yield(df, err) || err != nil {
				return
			}
		}
		if err := g.createErr(); err != nil {
			yield(nil, err)
		}
	}
}

// geoWrite is one Records call: the rows' statistics and the
// footer writers of the files written.
type geoWrite struct {
	cols  spatial.Columns
	col   int
	mu    sync.Mutex
	stats *spatial.GeoStats
	files map[string]*spatial.FooterWriter
	// annotate is set when the column is an Iceberg geometry field, whose
	// Parquet column carries the GEOMETRY logical type with crs.
	annotate bool
	crs      string
	// failed is the first file that could not be created. iceberg-go's
	// partitioned writer can lose that error (a partition's writer that
	// fails to open its file leaves before the final close would report
	// it), and the partition's rows with it.
	failed error
}

// createErr returns the first failure to create a file.
func (g *geoWrite) createErr() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.failed
}

// parquetGeometry reports whether the table's column is an Iceberg
// geometry field and the CRS its Parquet GEOMETRY type states ("" for the
// default, OGC:CRS84, which Parquet leaves unstated too).
func parquetGeometry(sc *iceberg.Schema, column string) (bool, string) {
	f, ok := sc.FindFieldByName(column)
	if !ok {
		return false, ""
	}
	g, ok := f.Type.(iceberg.GeometryType)
	if !ok {
		return false, ""
	}
	if crs := g.CRS(); crs != iceberg.DefaultGeoCRS {
		return true, crs
	}
	return true, ""
}

// observe records each batch's geometries before handing it on, so a file
// closing has seen all of its rows.
func (g *geoWrite) observe(rows iter.Seq2[arrow.RecordBatch, error]) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		for rec, err := range rows {
			if err == nil {
				g.mu.Lock()
				g.stats.AddArray(rec.Column(g.col))
				g.mu.Unlock()
			}
			if !yield(rec, err) {
				return
			}
		}
	}
}

// doc returns the "geo" document of the rows seen so far.
func (g *geoWrite) doc() ([]byte, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.stats.Metadata(g.cols).Marshal()
}

// fs returns tbl's FileIO with Create wrapped in a FooterWriter.
func (g *geoWrite) fs(tbl *table.Table) table.FSysF {
	return func(ctx context.Context) (iceio.IO, error) {
		fsys, err := tbl.FS(ctx)
		if err != nil {
			return nil, err
		}
		wfs, ok := fsys.(iceio.WriteFileIO)
		if !ok {
			return fsys, nil // WriteRecords refuses a read-only FileIO itself
		}
		return geoFS{WriteFileIO: wfs, g: g, created: format.CreatedFrom(ctx), scope: format.WriteScope(ctx)}, nil
	}
}

// sized returns df with the size its file has after the footer rewrite.
func (g *geoWrite) sized(tbl *table.Table, df iceberg.DataFile) (iceberg.DataFile, error) {
	g.mu.Lock()
	fw := g.files[df.FilePath()]
	delete(g.files, df.FilePath())
	g.mu.Unlock()
	if fw == nil || fw.Size() == df.FileSizeBytes() {
		return df, nil
	}
	out, err := copyDataFile(tbl.Metadata(), df, fw.Size(), df.FirstRowID())
	if err != nil {
		return nil, fmt.Errorf("geoparquet metadata for %s: %w", df.FilePath(), err)
	}
	return out, nil
}

// geoFS is a FileIO whose created files get GeoParquet footers.
type geoFS struct {
	iceio.WriteFileIO
	g       *geoWrite
	created *format.Created
	// scope, when set, are the roots a file may be created under (see
	// format.WithWriteScope).
	scope []string
}

// Create implements iceio.WriteFileIO. The file is recorded before it is
// written, so a write that fails part-way (a full disk) leaves a name to
// delete (see Created).
func (f geoFS) Create(name string) (iceio.FileWriter, error) {
	if err := format.CheckWrite(f.scope, name); err != nil {
		f.g.mu.Lock()
		if f.g.failed == nil {
			f.g.failed = err
		}
		f.g.mu.Unlock()
		return nil, err
	}
	f.created.Add(name)
	w, err := f.WriteFileIO.Create(name)
	if err != nil {
		f.g.mu.Lock()
		if f.g.failed == nil {
			f.g.failed = fmt.Errorf("create data file: %w", err)
		}
		f.g.mu.Unlock()
		return nil, err
	}
	fw := spatial.NewFooterWriter(w, f.g.doc, 0)
	if f.g.annotate {
		fw.AnnotateGeometry(f.g.cols.Geometry, f.g.crs)
	}
	f.g.mu.Lock()
	f.g.files[name] = fw
	f.g.mu.Unlock()
	return fw, nil
}

// FirstRowIDs returns files with first_row_id assigned in order from the
// next-row-id of meta, the head the files are appended to, as AddDataFiles
// requires on a v3 table. Other tables' files are returned as they are.
func FirstRowIDs(meta table.Metadata, files []iceberg.DataFile) ([]iceberg.DataFile, error) {
	if meta.Version() < 3 {
		return files, nil
	}
	next := meta.NextRowID()
	out := make([]iceberg.DataFile, len(files))
	for i, df := range files {
		id := next
		f, err := copyDataFile(meta, df, df.FileSizeBytes(), &id)
		if err != nil {
			return nil, fmt.Errorf("first row id of %s: %w", df.FilePath(), err)
		}
		out[i] = f
		next += df.Count()
	}
	return out, nil
}

// copyDataFile copies df with its file size and first row id replaced.
func copyDataFile(meta table.Metadata, df iceberg.DataFile, size int64, firstRowID *int64) (iceberg.DataFile, error) {
	spec := meta.PartitionSpecByID(int(df.SpecID()))
	if spec == nil {
		return nil, fmt.Errorf("partition spec %d is not in the table metadata", df.SpecID())
	}
	b, err := iceberg.NewDataFileBuilder(*spec, df.ContentType(), df.FilePath(), df.FileFormat(),
		df.Partition(), partitionLogicalTypes(*spec, meta.CurrentSchema()), nil, df.Count(), size)
	if err != nil {
		return nil, err
	}
	b.ColumnSizes(df.ColumnSizes()).ValueCounts(df.ValueCounts()).NullValueCounts(df.NullValueCounts()).
		NaNValueCounts(df.NaNValueCounts()).DistinctValueCounts(df.DistinctValueCounts()).
		LowerBoundValues(df.LowerBoundValues()).UpperBoundValues(df.UpperBoundValues()).
		KeyMetadata(df.KeyMetadata()).SplitOffsets(df.SplitOffsets()).EqualityFieldIDs(df.EqualityFieldIDs())
	if id := df.SortOrderID(); id != nil {
		b.SortOrderID(*id)
	}
	if firstRowID != nil {
		b.FirstRowID(*firstRowID)
	}
	return b.Build(), nil
}

// partitionLogicalTypes names the Avro logical type of each partition
// field whose value needs one, as the manifest writer expects.
func partitionLogicalTypes(spec iceberg.PartitionSpec, sc *iceberg.Schema) map[int]string {
	out := map[int]string{}
	for _, f := range spec.Fields() {
		src, ok := sc.FindFieldByID(f.SourceID())
		if !ok {
			continue
		}
		switch f.Transform.ResultType(src.Type).(type) {
		case iceberg.DateType:
			out[f.FieldID] = "date"
		case iceberg.TimeType:
			out[f.FieldID] = "time-micros"
		case iceberg.TimestampType, iceberg.TimestampTzType:
			out[f.FieldID] = "timestamp-micros"
		case iceberg.DecimalType:
			out[f.FieldID] = "decimal"
		case iceberg.UUIDType:
			out[f.FieldID] = "uuid"
		}
	}
	return out
}
