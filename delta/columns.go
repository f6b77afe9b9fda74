package delta

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"runtime"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// parquetWriter is what a FileWriter needs of the Parquet file it writes:
// pqarrow.FileWriter's methods of the same names.
type parquetWriter interface {
	// Write writes rec as a row group of its own (several when it holds
	// more than the properties' maximum row group length).
	Write(rec arrow.RecordBatch) error
	// WriteBuffered appends rec to the row group being written.
	WriteBuffered(rec arrow.RecordBatch) error
	// NewBufferedRowGroupChecked closes the row group being written and
	// starts the next.
	NewBufferedRowGroupChecked() error
	// AppendKeyValueMetadata sets a key-value pair of the footer.
	AppendKeyValueMetadata(key, value string) error
	Close() error
}

// newParquetWriter writes a file of schema sc to w: with its columns
// encoded at once, one goroutine each (columnsWriter), when every column
// is flat and of a type columnsWriter takes, and by pqarrow.FileWriter
// otherwise. The two write the same file.
func newParquetWriter(sc *arrow.Schema, w io.Writer, props *parquet.WriterProperties) (parquetWriter, error) {
	arrowProps := pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema())
	if !flatColumns(sc) {
		return pqarrow.NewFileWriter(sc, w, props, arrowProps)
	}
	return newColumnsWriter(sc, w, props, arrowProps)
}

// flatColumns reports whether every field of sc is a column of a type
// columnsWriter writes as pqarrow does: no nesting (whose levels pqarrow
// builds), no dictionaries, and no decimals (whose precision pqarrow
// checks before it writes).
func flatColumns(sc *arrow.Schema) bool {
	for _, f := range sc.Fields() {
		switch f.Type.ID() {
		case arrow.BOOL, arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
			arrow.FLOAT32, arrow.FLOAT64, arrow.STRING, arrow.BINARY,
			arrow.LARGE_STRING, arrow.LARGE_BINARY, arrow.DATE32, arrow.TIMESTAMP:
		default:
			return false
		}
	}
	return true
}

// columnsWriter writes Parquet files whose columns are all flat, encoding
// and compressing the columns of a batch on goroutines of their own, at
// most one per core: a file's pages are most of the CPU a rewrite spends,
// and pqarrow.FileWriter encodes them one column after another. Each row
// group is buffered (its columns are encoded at once and written in order
// when it closes), which a file cut into row groups of a set size is in
// pqarrow too.
//
// The file is the one pqarrow.FileWriter writes with the same properties:
// the same Parquet schema, the stored Arrow schema, and pages written with
// pqarrow's own column encoder (pqarrow.WriteArrowToColumn), handed the
// definition levels pqarrow builds for a flat column (none for a required
// one, 1 or 0 per value for a nullable one).
type columnsWriter struct {
	sc         *arrow.Schema
	fw         *file.Writer
	arrowProps pqarrow.ArrowWriterProperties
	rgw        file.BufferedRowGroupWriter // nil until the first row group
	rows       int64                       // the rows in rgw
	closed     bool
}

func newColumnsWriter(sc *arrow.Schema, w io.Writer, props *parquet.WriterProperties, arrowProps pqarrow.ArrowWriterProperties) (*columnsWriter, error) {
	pqschema, err := pqarrow.ToParquet(sc, props, arrowProps)
	if err != nil {
		return nil, err
	}
	meta := make(metadata.KeyValueMetadata, 0, sc.Metadata().Len()+1)
	for i, k := range sc.Metadata().Keys() {
		meta.Append(k, sc.Metadata().Values()[i])
	}
	// The schema as pqarrow stores it; a flat schema has no list element
	// names for it to normalise.
	meta.Append("ARROW:schema", base64.StdEncoding.EncodeToString(flight.SerializeSchema(sc, props.Allocator())))
	fw, err := file.NewParquetWriterWithError(w, pqschema.Root(), file.WithWriterProps(props), file.WithWriteMetadata(meta))
	if err != nil {
		return nil, err
	}
	return &columnsWriter{sc: sc, fw: fw, arrowProps: arrowProps}, nil
}

func (c *columnsWriter) check(rec arrow.RecordBatch) error {
	if c.closed {
		return fmt.Errorf("write to a closed Parquet writer")
	}
	if !rec.Schema().Equal(c.sc) {
		return fmt.Errorf("record schema does not match writer's. \nrecord: %s\nwriter: %s", rec.Schema(), c.sc)
	}
	return nil
}

func (c *columnsWriter) Write(rec arrow.RecordBatch) error {
	if err := c.check(rec); err != nil {
		return err
	}
	if err := c.closeRowGroup(); err != nil {
		return err
	}
	if rec.NumRows() == 0 {
		return c.emptyRowGroup()
	}
	maxRows := c.fw.Properties().MaxRowGroupLength()
	for off := int64(0); ; {
		if err := c.NewBufferedRowGroupChecked(); err != nil {
			return err
		}
		n := min(maxRows, rec.NumRows()-off)
		if err := c.writeColumns(rec, off, n); err != nil {
			return err
		}
		if off += n; off >= rec.NumRows() {
			return c.closeRowGroup()
		}
	}
}

func (c *columnsWriter) WriteBuffered(rec arrow.RecordBatch) error {
	if err := c.check(rec); err != nil {
		return err
	}
	if c.rgw == nil {
		if err := c.NewBufferedRowGroupChecked(); err != nil {
			return err
		}
	}
	maxRows := c.fw.Properties().MaxRowGroupLength()
	for off := int64(0); ; {
		n := min(maxRows-c.rows, rec.NumRows()-off)
		if err := c.writeColumns(rec, off, n); err != nil {
			return err
		}
		if off += n; off >= rec.NumRows() {
			return nil
		}
		if err := c.NewBufferedRowGroupChecked(); err != nil {
			return err
		}
	}
}

// emptyRowGroup writes a row group of no rows, as pqarrow does: one
// unbuffered, each column started and none written.
func (c *columnsWriter) emptyRowGroup() error {
	rgw, err := c.fw.AppendRowGroupChecked()
	if err != nil {
		return err
	}
	for range c.fw.NumColumns() {
		if _, err := rgw.NextColumn(); err != nil {
			return err
		}
	}
	return rgw.Close()
}

func (c *columnsWriter) NewBufferedRowGroupChecked() error {
	if err := c.closeRowGroup(); err != nil {
		return err
	}
	rgw, err := c.fw.AppendBufferedRowGroupChecked()
	if err != nil {
		return err
	}
	c.rgw, c.rows = rgw, 0
	return nil
}

func (c *columnsWriter) closeRowGroup() error {
	if c.rgw == nil {
		return nil
	}
	rgw := c.rgw
	c.rgw = nil
	return rgw.Close()
}

// writeColumns writes rows [off, off+n) of rec into the row group being
// written, each column on a goroutine of its own. A buffered row group's
// columns share no state until it closes: each has its own encoder, page
// buffer and statistics.
func (c *columnsWriter) writeColumns(rec arrow.RecordBatch, off, n int64) error {
	if n == 0 {
		// pqarrow writes no page for no rows.
		return nil
	}
	cws := make([]file.ColumnChunkWriter, rec.NumCols())
	for i := range cws {
		cw, err := c.rgw.Column(i)
		if err != nil {
			return err
		}
		cws[i] = cw
	}
	errs := make([]error, len(cws))
	slots := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, cw := range cws {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			errs[i] = c.writeColumn(cw, i, rec.Column(i), off, n)
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	c.rows += n
	return nil
}

func (c *columnsWriter) AppendKeyValueMetadata(key, value string) error {
	return c.fw.AppendKeyValueMetadata(key, value)
}

// writeColumn writes rows [off, off+n) of column i, col, with cw.
func (c *columnsWriter) writeColumn(cw file.ColumnChunkWriter, i int, col arrow.Array, off, n int64) error {
	if off != 0 || n != int64(col.Len()) {
		col = array.NewSlice(col, off, off+n)
		defer col.Release()
	}
	var def []int16
	if cw.LevelInfo().DefLevel > 0 {
		def = make([]int16, col.Len())
		for j := range def {
			if col.IsValid(j) {
				def[j] = 1
			}
		}
	}
	ctx := pqarrow.NewArrowWriteContext(context.Background(), &c.arrowProps)
	if err := pqarrow.WriteArrowToColumn(ctx, cw, col, def, nil, c.sc.Field(i).Nullable); err != nil {
		return fmt.Errorf("column %s: %w", c.sc.Field(i).Name, err)
	}
	return nil
}

func (c *columnsWriter) Close() error {
	if c.closed {
		return nil
	}
	c.closed = true
	err := c.closeRowGroup()
	if cerr := c.fw.Close(); err == nil {
		err = cerr
	}
	return err
}
