// Package footer checks what a Parquet footer declares against the file it
// came from, before anything is read or allocated on its word. arrow-go
// reads a column chunk by allocating its declared total_compressed_size
// and seeks to its declared offsets; a footer claiming a 1 TiB chunk in a
// 4 KiB file would make the process allocate 1 TiB and die. Every size and
// offset a reader trusts is checked here against the file's real size, so
// such a file is refused with an error that names the field.
package footer

import (
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
)

// ErrBadFooter marks a Parquet footer that declares sizes or offsets the
// file cannot hold.
var ErrBadFooter = errors.New("parquet footer out of bounds")

// Error is a footer field whose value the file cannot hold.
type Error struct {
	// Field names the footer field, e.g. "total_compressed_size".
	Field string
	// RowGroup and Column locate it (-1 when not applicable).
	RowGroup, Column int
	// Value is the declared value; Limit what the file allows.
	Value, Limit int64
}

func (e *Error) Error() string {
	where := ""
	if e.RowGroup >= 0 {
		where = fmt.Sprintf("row group %d ", e.RowGroup)
	}
	if e.Column >= 0 {
		where += fmt.Sprintf("column %d ", e.Column)
	}
	if e.Value < 0 {
		return fmt.Sprintf("%v: %s%s is %d, negative", ErrBadFooter, where, e.Field, e.Value)
	}
	return fmt.Sprintf("%v: %s%s is %d, the file allows at most %d", ErrBadFooter, where, e.Field, e.Value, e.Limit)
}

func (e *Error) Unwrap() error { return ErrBadFooter }

// magic is the length of the leading "PAR1".
const magic = 4

// maxRowsPerByte bounds the rows a row group may declare per byte of the
// file's data: a run-length-encoded page of one repeated value or of nulls
// packs millions of rows into a few bytes, so the bound is generous; it
// only stops counts no file can hold.
const maxRowsPerByte = 1 << 20

// Check returns an *Error for the first size or offset in meta that a file
// of size bytes cannot hold: column chunk offsets (data, dictionary and
// index pages) and compressed sizes must lie between the leading magic
// and the footer; row and value counts, row group sizes and offsets must
// be non-negative, and a row group's rows possible for the bytes there
// are. Uncompressed sizes may exceed the file; arrow-go bounds each page's
// uncompressed size itself.
func Check(meta *metadata.FileMetaData, size int64) error {
	data := size - 8 - int64(meta.Size()) // where the footer starts
	if meta.NumRows < 0 {
		return &Error{Field: "num_rows", RowGroup: -1, Column: -1, Value: meta.NumRows}
	}
	for i := range meta.NumRowGroups() {
		rg := meta.RowGroup(i)
		if err := checkRowGroup(rg, i, data); err != nil {
			return err
		}
		for j := range rg.NumColumns() {
			cc, err := rg.ColumnChunk(j)
			if err != nil {
				return fmt.Errorf("%w: row group %d column %d: %v", ErrBadFooter, i, j, err)
			}
			if err := checkChunk(cc, i, j, data); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkRowGroup(rg *metadata.RowGroupMetaData, i int, data int64) error {
	bad := func(field string, v, limit int64) error {
		return &Error{Field: field, RowGroup: i, Column: -1, Value: v, Limit: limit}
	}
	switch {
	case rg.NumRows() < 0:
		return bad("num_rows", rg.NumRows(), 0)
	case rg.NumRows() > data*maxRowsPerByte:
		return bad("num_rows", rg.NumRows(), data*maxRowsPerByte)
	case rg.TotalByteSize() < 0:
		return bad("total_byte_size", rg.TotalByteSize(), 0)
	case rg.TotalCompressedSize() < 0:
		// Not bounded above: some writers recorded the uncompressed
		// size, and readers do not use it.
		return bad("total_compressed_size", rg.TotalCompressedSize(), 0)
	case rg.FileOffset() < 0:
		// Some writers recorded wrong offsets here; readers use the
		// column chunks' own.
		return bad("file_offset", rg.FileOffset(), 0)
	}
	return nil
}

func checkChunk(cc *metadata.ColumnChunkMetaData, i, j int, data int64) error {
	bad := func(field string, v, limit int64) error {
		return &Error{Field: field, RowGroup: i, Column: j, Value: v, Limit: limit}
	}
	start := cc.DataPageOffset()
	if start < magic || start >= data {
		if start < 0 {
			return bad("data_page_offset", start, data)
		}
		return bad("data_page_offset", start, data-1)
	}
	if cc.HasDictionaryPage() && cc.DictionaryPageOffset() > 0 {
		if d := cc.DictionaryPageOffset(); d < magic || d >= data {
			return bad("dictionary_page_offset", d, data-1)
		}
		start = min(start, cc.DictionaryPageOffset())
	}
	if cc.HasIndexPage() {
		if x := cc.IndexPageOffset(); x < 0 || x >= data {
			return bad("index_page_offset", x, data-1)
		}
	}
	n := cc.TotalCompressedSize()
	if n < 0 || n > data-start {
		return bad("total_compressed_size", n, data-start)
	}
	if cc.TotalUncompressedSize() < 0 {
		return bad("total_uncompressed_size", cc.TotalUncompressedSize(), 0)
	}
	if v := cc.NumValues(); v < 0 {
		return bad("num_values", v, 0)
	}
	return nil
}

// Open opens a Parquet file read through r and checks its footer against
// r's size (see Check). The caller closes the reader.
func Open(r parquet.ReaderAtSeeker, opts ...file.ReadOption) (*file.Reader, error) {
	size, err := r.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, fmt.Errorf("parquet: size: %w", err)
	}
	pf, err := file.NewParquetReader(r, opts...)
	if err != nil {
		return nil, err
	}
	if err := Check(pf.MetaData(), size); err != nil {
		pf.Close()
		return nil, err
	}
	return pf, nil
}

// CheckFile opens the data file at path with open (a file system's Open,
// such as iceberg-go's io.IO's) and checks its footer (see Check). The
// error names the file.
func CheckFile[F interface {
	parquet.ReaderAtSeeker
	io.Closer
}](open func(string) (F, error), path string) error {
	_, err := ReadFile(open, path)
	return err
}

// ReadFile is CheckFile, returning the checked footer.
func ReadFile[F interface {
	parquet.ReaderAtSeeker
	io.Closer
}](open func(string) (F, error), path string) (*metadata.FileMetaData, error) {
	f, err := open(path)
	if err != nil {
		return nil, fmt.Errorf("data file %s: %w", path, err)
	}
	defer f.Close()
	pf, err := Open(f)
	if err != nil {
		return nil, fmt.Errorf("data file %s is not readable Parquet: %w", path, err)
	}
	return pf.MetaData(), pf.Close()
}
