package delta

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	// Parquet pages compressed by encoders of a page's window.
	_ "github.com/geocompact/geocompact/internal/zstdcodec"
)

// PhysicalSchema is the Arrow schema of the table's data files: data columns
// only (partition columns live in the log), named by physical names, with
// column mapping ids as Parquet field ids.
func (s *Snapshot) PhysicalSchema() (*arrow.Schema, error) {
	mode := s.ColumnMapping()
	parts := map[string]bool{}
	for _, p := range s.Metadata.PartitionColumns {
		parts[p] = true
	}
	var fields []arrow.Field
	for _, f := range s.Schema.Fields {
		if parts[f.Name] {
			continue
		}
		af, err := physicalField(f, mode)
		if err != nil {
			return nil, err
		}
		fields = append(fields, af)
	}
	return arrow.NewSchema(fields, nil), nil
}

func physicalField(f *StructField, mode ColumnMapping) (arrow.Field, error) {
	dt, err := physicalType(f.Type, mode)
	if err != nil {
		return arrow.Field{}, fmt.Errorf("column %q: %w", f.Name, err)
	}
	af := arrow.Field{Name: f.PhysicalName(mode), Type: dt, Nullable: f.Nullable}
	if id, ok := f.FieldID(); ok && mode != MappingNone {
		af.Metadata = arrow.NewMetadata([]string{parquetIDKey}, []string{strconv.Itoa(id)})
	}
	return af, nil
}

func physicalType(t DataType, mode ColumnMapping) (arrow.DataType, error) {
	switch t := t.(type) {
	case *StructType:
		fields := make([]arrow.Field, len(t.Fields))
		for i, f := range t.Fields {
			af, err := physicalField(f, mode)
			if err != nil {
				return nil, err
			}
			fields[i] = af
		}
		return arrow.StructOf(fields...), nil
	case *ArrayType:
		et, err := physicalType(t.ElementType, mode)
		if err != nil {
			return nil, err
		}
		return arrow.ListOfField(arrow.Field{Name: "element", Type: et, Nullable: t.ContainsNull}), nil
	case *MapType:
		kt, err := physicalType(t.KeyType, mode)
		if err != nil {
			return nil, err
		}
		vt, err := physicalType(t.ValueType, mode)
		if err != nil {
			return nil, err
		}
		mt := arrow.MapOf(kt, vt)
		mt.SetItemNullable(t.ValueContainsNull)
		return mt, nil
	}
	return arrowType(t)
}

// retype gives data the type dt, which differs at most in field names and
// metadata: the buffers are shared.
func retype(d arrow.ArrayData, dt arrow.DataType) arrow.ArrayData {
	children := d.Children()
	var kids []arrow.ArrayData
	switch t := dt.(type) {
	case *arrow.StructType:
		for i, c := range children {
			kids = append(kids, retype(c, t.Field(i).Type))
		}
	case *arrow.ListType:
		kids = []arrow.ArrayData{retype(children[0], t.Elem())}
	case *arrow.MapType:
		kids = []arrow.ArrayData{retype(children[0], t.Elem())}
	default:
		kids = children
		for _, k := range kids {
			k.Retain()
		}
	}
	out := array.NewData(dt, d.Len(), d.Buffers(), kids, d.NullN(), d.Offset())
	for _, k := range kids {
		k.Release()
	}
	return out
}

// FileWriter writes one data file of a table from batches in the logical
// schema (Snapshot.ArrowSchema), collecting its stats.
type FileWriter struct {
	snap      *Snapshot
	name      string
	partition map[string]*string
	physical  *arrow.Schema
	logical   []string // logical names of the physical columns, in order
	out       io.WriteCloser
	counter   *countingWriter
	pw        parquetWriter
	stats     *StatsCollector
	// rowGroupRows, when positive, is the rows of each row group, and
	// inGroup the rows of the one being written (see CutRowGroups).
	rowGroupRows, inGroup int64
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// NewFileWriter starts the data file name (relative to the table root) with
// the given partition values (keyed by physical partition column names, as
// in add actions). A nil props writes zstd-compressed Parquet.
func (t *Table) NewFileWriter(ctx context.Context, s *Snapshot, name string, partitionValues map[string]*string, props *parquet.WriterProperties) (*FileWriter, error) {
	phys, err := s.PhysicalSchema()
	if err != nil {
		return nil, err
	}
	if props == nil {
		props = defaultWriterProperties(phys)
	}
	out, err := t.Store.Create(ctx, name)
	if err != nil {
		return nil, err
	}
	cw := &countingWriter{w: out}
	pw, err := newParquetWriter(phys, cw, props)
	if err != nil {
		out.Close()
		return nil, fmt.Errorf("write %s: %w", name, err)
	}
	w := &FileWriter{snap: s, name: name, partition: partitionValues, physical: phys, out: out,
		counter: cw, pw: pw, stats: newStatsCollector(s)}
	parts := map[string]bool{}
	for _, p := range s.Metadata.PartitionColumns {
		parts[p] = true
	}
	for _, f := range s.Schema.Fields {
		if !parts[f.Name] {
			w.logical = append(w.logical, f.Name)
		}
	}
	return w, nil
}

// defaultWriterProperties are the Parquet settings of the files a
// FileWriter writes when its caller gives none: zstd, and dictionary
// encoding only where it pays: each column falls back to plain encoding
// when its dictionary would not be smaller, so that columns of unique
// values (WKB, coordinates, ids) are not dictionary-encoded in vain.
func defaultWriterProperties(phys *arrow.Schema) *parquet.WriterProperties {
	props := []parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Zstd)}
	ps, err := pqarrow.ToParquet(phys, parquet.NewWriterProperties(props...), pqarrow.DefaultWriterProps())
	if err == nil {
		for i := range ps.NumColumns() {
			props = append(props, parquet.WithDictionaryCostFallbackFor(ps.Column(i).Path(), true))
		}
	}
	return parquet.NewWriterProperties(props...)
}

// Write appends a batch; columns are found by logical name.
func (w *FileWriter) Write(rec arrow.RecordBatch) error {
	cols := make([]arrow.Array, len(w.logical))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i, name := range w.logical {
		dt := w.physical.Field(i).Type
		idx := rec.Schema().FieldIndices(name)
		if len(idx) == 0 {
			cols[i] = array.MakeArrayOfNull(memory.DefaultAllocator, dt, int(rec.NumRows()))
			continue
		}
		d := retype(rec.Column(idx[0]).Data(), dt)
		cols[i] = array.MakeFromData(d)
		d.Release()
	}
	phys := array.NewRecordBatch(w.physical, cols, rec.NumRows())
	defer phys.Release()
	write := w.pw.Write
	if w.rowGroupRows > 0 {
		write = w.writeCut
	}
	if err := write(phys); err != nil {
		return fmt.Errorf("write %s: %w", w.name, err)
	}
	w.stats.Add(rec)
	return nil
}

// CutRowGroups makes the writer cut the file's rows into row groups of n
// rows (the last may hold fewer), however Write is handed them; by default
// each batch written is a row group of its own.
func (w *FileWriter) CutRowGroups(n int64) { w.rowGroupRows = n }

// writeCut writes rec into the row group being written, starting the next
// one each time it holds rowGroupRows rows.
func (w *FileWriter) writeCut(rec arrow.RecordBatch) error {
	for off := int64(0); off < rec.NumRows(); {
		if w.inGroup == w.rowGroupRows {
			if err := w.pw.NewBufferedRowGroupChecked(); err != nil {
				return err
			}
			w.inGroup = 0
		}
		n := min(rec.NumRows()-off, w.rowGroupRows-w.inGroup)
		part := rec.NewSlice(off, off+n)
		err := w.pw.WriteBuffered(part)
		part.Release()
		if err != nil {
			return err
		}
		w.inGroup, off = w.inGroup+n, off+n
	}
	return nil
}

// Close finishes the file and returns its add action (dataChange true; a
// rewrite sets it false, see RewriteActions).
func (w *FileWriter) Close() (*Add, error) {
	if err := w.pw.Close(); err != nil {
		w.out.Close()
		return nil, fmt.Errorf("write %s: %w", w.name, err)
	}
	if err := w.out.Close(); err != nil {
		return nil, err
	}
	stats, err := w.stats.Stats().JSON()
	if err != nil {
		return nil, err
	}
	return &Add{Path: EncodePath(w.name), PartitionValues: w.partition, Size: w.counter.n,
		ModificationTime: time.Now().UnixMilli(), DataChange: true, Stats: stats}, nil
}

// EncodePath URL-encodes a relative file path for an add or remove action,
// segment by segment, as a valid RFC 3986 relative reference. ':' is
// escaped too (url.PathEscape keeps it): java.net.URI, which Delta on
// Spark resolves add paths with, reads a first segment holding ':' as a
// scheme and refuses the path; delta-rs writes %3A there as well.
func EncodePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = strings.ReplaceAll(url.PathEscape(s), ":", "%3A")
	}
	return strings.Join(segs, "/")
}

// RewriteActions returns the actions of a data-preserving rewrite: a remove
// (dataChange=false, with the file's metadata and deletion vector) for each
// replaced file and an add (dataChange=false) for each new one. The new files
// carry no deletion vectors: deleted rows were left out when rewriting.
func RewriteActions(replaced, added []*Add, now time.Time) []Action {
	ts := now.UnixMilli()
	ext := true
	out := make([]Action, 0, len(replaced)+len(added))
	for _, f := range replaced {
		size := f.Size
		out = append(out, Action{Remove: &Remove{Path: f.Path, DeletionTimestamp: &ts, DataChange: false,
			ExtendedFileMetadata: &ext, PartitionValues: f.PartitionValues, Size: &size, Stats: f.Stats,
			Tags: f.Tags, DeletionVector: f.DeletionVector, BaseRowID: f.BaseRowID,
			DefaultRowCommitVersion: f.DefaultRowCommitVersion}})
	}
	for _, f := range added {
		a := *f
		a.DataChange = false
		out = append(out, Action{Add: &a})
	}
	return out
}
