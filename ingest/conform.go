package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/geocompact/geocompact/internal/footer"
	"github.com/geocompact/geocompact/spatial"
)

// conformOpts says how files are conformed to the table: the geometry
// column, whether missing bbox columns are computed from it, and whether
// columns the table lacks are left out rather than refused.
type conformOpts struct {
	geometry  string
	addBBox   bool
	dropExtra bool
}

// conformStream reads a file and conforms its batches to the table's
// schema as its consumer asks for them: it holds one batch at a time,
// never a file's or the ingest's rows (see readParquet's budget).
type conformStream struct {
	ctx    context.Context
	schema *arrow.Schema
	conf   conformOpts
	read   readOpts
}

// ConformError is a file that does not fit the table, found while its
// rows were streamed to the writer; the writer's files are deleted.
type ConformError struct {
	Path string
	Err  error
}

func (e *ConformError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *ConformError) Unwrap() error { return e.Err }

// file calls fn with each conformed batch of the file at path, which it
// releases when fn returns. A file that does not fit the table returns a
// *ConformError.
func (c *conformStream) file(path string, fn func(arrow.RecordBatch) error) error {
	var fnErr error
	err := readParquet(c.ctx, path, c.read, func(rec arrow.RecordBatch) error {
		out, err := conform(c.ctx, rec, c.schema, c.conf)
		if err != nil {
			return err
		}
		defer out.Release()
		if fnErr = fn(out); fnErr != nil {
			return errStopRead
		}
		return nil
	})
	switch {
	case fnErr != nil:
		return fnErr
	case err != nil:
		return &ConformError{Path: path, Err: err}
	}
	return nil
}

// readOpts is how ingest reads a file: the allocator its batches come
// from and the memory budget one batch may take.
type readOpts struct {
	mem    memory.Allocator
	budget int64
}

// errStopRead ends a read early without an error.
var errStopRead = errors.New("ingest: stop reading")

// readParquet calls fn with each batch of the Parquet file at path, after
// checking its footer against the file (a footer declaring chunks the file
// cannot hold is refused before anything is allocated on its word). The
// file is read in batches of at most about o.budget/4 bytes of
// uncompressed data (rows per batch from the row groups' average row
// size), through a buffered stream, so memory stays bounded however many
// or large its row groups are.
func readParquet(ctx context.Context, path string, o readOpts, fn func(arrow.RecordBatch) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	props := parquet.NewReaderProperties(o.mem)
	props.BufferedStreamEnabled = true
	props.BufferSize = 1 << 20
	pf, err := footer.Open(f, file.WithReadProps(props))
	if err != nil {
		return err
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: batchRows(pf, o.budget)}, o.mem)
	if err != nil {
		return err
	}
	rr, err := fr.GetRecordReader(ctx, nil, nil)
	if err != nil {
		return err
	}
	defer rr.Release()
	for rr.Next() {
		if err := fn(rr.RecordBatch()); err != nil {
			return err
		}
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// batchRows is how many rows of pf one batch holds so that it takes about
// a quarter of budget (the rest is for the conformed copy, the writer's
// buffers and the next batch), between 1 and 64 Ki rows.
func batchRows(pf *file.Reader, budget int64) int64 {
	const most = 1 << 16
	if budget <= 0 {
		return most
	}
	var bytes, rows int64
	for _, rg := range pf.MetaData().RowGroups {
		bytes += rg.TotalByteSize
		rows += rg.NumRows
	}
	if rows <= 0 || bytes <= 0 {
		return most
	}
	perRow := max(bytes/rows, 1)
	return min(max(budget/4/perRow, 1), most)
}

// conform returns rec in the target schema: columns matched by name,
// WKB wrapped in (or unwrapped from) the geoarrow extension as the table
// needs, integers and floats widened, absent optional columns filled with
// nulls, with o.addBBox missing bbox columns computed from the WKB, and
// with o.dropExtra columns the table lacks left out.
func conform(ctx context.Context, rec arrow.RecordBatch, target *arrow.Schema, o conformOpts) (arrow.RecordBatch, error) {
	n := rec.NumRows()
	sc := rec.Schema()
	if extra := missingFrom(sc, target); len(extra) > 0 && !o.dropExtra {
		return nil, &ExtraColumnsError{Columns: extra}
	}
	var bbox []arrow.Array
	if o.addBBox && !hasAllBBox(sc) {
		idx := sc.FieldIndices(o.geometry)
		if len(idx) != 1 {
			return nil, fmt.Errorf("geometry column %q is missing", o.geometry)
		}
		bbox = computeBBox(rec.Column(idx[0]))
		defer func() {
			for _, a := range bbox {
				a.Release()
			}
		}()
	}
	cols := make([]arrow.Array, 0, target.NumFields())
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	for _, tf := range target.Fields() {
		col, err := conformColumn(ctx, rec, tf, bbox)
		if err != nil {
			return nil, err
		}
		if !tf.Nullable && col.NullN() > 0 {
			col.Release()
			return nil, fmt.Errorf("column %q has %d nulls but the table requires it", tf.Name, col.NullN())
		}
		cols = append(cols, col)
	}
	return array.NewRecordBatch(target, cols, n), nil
}

func hasAllBBox(sc *arrow.Schema) bool {
	for _, name := range spatial.BBoxColumns {
		if len(sc.FieldIndices(name)) == 0 {
			return false
		}
	}
	return true
}

// conformColumn returns the data for table field tf (a new reference).
func conformColumn(ctx context.Context, rec arrow.RecordBatch, tf arrow.Field, bbox []arrow.Array) (arrow.Array, error) {
	idx := rec.Schema().FieldIndices(tf.Name)
	if len(idx) == 0 {
		for i, name := range spatial.BBoxColumns {
			if name != tf.Name {
				continue
			}
			if bbox == nil {
				// Null boxes would hide every row from bbox pruning.
				return nil, fmt.Errorf("column %q is missing (a GeoParquet covering does not fill it; %w)", tf.Name, ErrNoBBox)
			}
			bbox[i].Retain()
			return bbox[i], nil
		}
		if !tf.Nullable {
			return nil, fmt.Errorf("column %q is required by the table but missing", tf.Name)
		}
		return array.MakeArrayOfNull(memory.DefaultAllocator, tf.Type, int(rec.NumRows())), nil
	}
	col := rec.Column(idx[0])
	if ext, ok := col.(array.ExtensionArray); ok && !arrow.TypeEqual(col.DataType(), tf.Type) {
		col = ext.Storage()
	}
	switch {
	case arrow.TypeEqual(col.DataType(), tf.Type):
		col.Retain()
		return col, nil
	}
	if et, ok := tf.Type.(arrow.ExtensionType); ok && arrow.TypeEqual(col.DataType(), et.StorageType()) {
		return array.NewExtensionArrayWithStorage(et, col), nil
	}
	if widens(col.DataType(), tf.Type) {
		out, err := compute.CastArray(ctx, col, compute.SafeCastOptions(tf.Type))
		if err != nil {
			return nil, fmt.Errorf("column %q: %w", tf.Name, err)
		}
		return out, nil
	}
	return nil, fmt.Errorf("column %q has type %s, the table wants %s", tf.Name, col.DataType(), tf.Type)
}

// widens reports whether from converts to to without loss.
func widens(from, to arrow.DataType) bool {
	switch to.ID() {
	case arrow.INT64:
		switch from.ID() {
		case arrow.INT8, arrow.INT16, arrow.INT32, arrow.UINT8, arrow.UINT16, arrow.UINT32:
			return true
		}
	case arrow.INT32:
		switch from.ID() {
		case arrow.INT8, arrow.INT16, arrow.UINT8, arrow.UINT16:
			return true
		}
	case arrow.FLOAT64:
		return from.ID() == arrow.FLOAT32
	case arrow.STRING:
		return from.ID() == arrow.LARGE_STRING
	case arrow.BINARY:
		return from.ID() == arrow.LARGE_BINARY
	}
	return false
}

// computeBBox returns the four bbox columns of a WKB column. Null
// geometries get null boxes, empty ones NaN; invalid WKB never reaches
// here (validation refused it).
func computeBBox(geom arrow.Array) []arrow.Array {
	if ext, ok := geom.(array.ExtensionArray); ok {
		geom = ext.Storage()
	}
	var bs [4]*array.Float64Builder
	for i := range bs {
		bs[i] = array.NewFloat64Builder(memory.DefaultAllocator)
		bs[i].Reserve(geom.Len())
	}
	value := func(i int) []byte { return nil }
	switch g := geom.(type) {
	case *array.Binary:
		value = g.Value
	case *array.LargeBinary:
		value = g.Value
	case *array.BinaryView:
		value = g.Value
	}
	for i := range geom.Len() {
		if geom.IsNull(i) {
			for _, b := range bs {
				b.AppendNull()
			}
			continue
		}
		env, err := spatial.Envelope(value(i))
		if err != nil || env.IsEmpty() {
			for _, b := range bs {
				b.Append(math.NaN())
			}
			continue
		}
		bs[0].Append(env.MinX)
		bs[1].Append(env.MinY)
		bs[2].Append(env.MaxX)
		bs[3].Append(env.MaxY)
	}
	out := make([]arrow.Array, 4)
	for i, b := range bs {
		out[i] = b.NewArray()
		b.Release()
	}
	return out
}
