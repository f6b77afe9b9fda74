package spatial

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

// ErrFooter marks a Parquet stream whose footer cannot be given GeoParquet
// metadata: not Parquet, encrypted, or a footer larger than what is held.
var ErrFooter = errors.New("spatial: cannot add GeoParquet metadata to the Parquet footer")

// parquetMagic ends every Parquet file (and starts it).
var parquetMagic = []byte("PAR1")

// DefaultFooterHold is the tail FooterWriter holds back by default: far
// more than the footer of a file geocompact writes (about 3 KB for a file of
// 25,000 polygons in one row group; a few kilobytes more per row group).
const DefaultFooterHold = 4 << 20

// FooterWriter passes a Parquet file's bytes through to an underlying
// writer and, on Close, adds the GeoParquet "geo" key to the file's
// key-value metadata. It serves writers that fix a file's key-value
// metadata when they open it, before the rows, which decide the bbox and
// geometry types, are known: the footer comes last, so FooterWriter holds
// back the stream's tail (at most 2×Hold bytes, never the whole file) and
// rewrites the footer in it. The file grows by the size of the document;
// Size reports the final size.
type FooterWriter struct {
	w       io.WriteCloser
	geo     func() ([]byte, error)
	hold    int
	tail    []byte
	written int64
	closed  bool
	err     error
	// annotate, when set, is the top-level column Close gives Parquet's
	// GEOMETRY logical type, with crs ("" for Parquet's OGC:CRS84).
	annotate, crs string
}

// NewFooterWriter returns a FooterWriter over w. geo is called once, at
// Close, for the "geo" value; nil from it leaves the footer as written.
// hold <= 0 means DefaultFooterHold.
func NewFooterWriter(w io.WriteCloser, geo func() ([]byte, error), hold int) *FooterWriter {
	if hold <= 0 {
		hold = DefaultFooterHold
	}
	return &FooterWriter{w: w, geo: geo, hold: hold}
}

// AnnotateGeometry makes Close also give the top-level BYTE_ARRAY column
// the Parquet GEOMETRY logical type, with crs ("" leaves Parquet's
// default, OGC:CRS84). Iceberg v3 stores its geometry type so: readers
// that follow the spec (PyIceberg, DuckDB) refuse a geometry field whose
// file column is plain binary. The data pages are the same either way.
func (f *FooterWriter) AnnotateGeometry(column, crs string) {
	f.annotate, f.crs = column, crs
}

// Write implements io.Writer.
func (f *FooterWriter) Write(p []byte) (int, error) {
	if f.err != nil {
		return 0, f.err
	}
	f.tail = append(f.tail, p...)
	if len(f.tail) > 2*f.hold {
		n := len(f.tail) - f.hold
		if err := f.flush(f.tail[:n]); err != nil {
			return 0, err
		}
		f.tail = append(f.tail[:0], f.tail[n:]...)
	}
	return len(p), nil
}

// ReadFrom implements io.ReaderFrom.
func (f *FooterWriter) ReadFrom(r io.Reader) (int64, error) {
	return io.Copy(struct{ io.Writer }{f}, r)
}

func (f *FooterWriter) flush(b []byte) error {
	n, err := f.w.Write(b)
	f.written += int64(n)
	if err == nil && n != len(b) {
		err = io.ErrShortWrite
	}
	if err != nil {
		f.err = err
	}
	return err
}

// Size returns the bytes written to the underlying writer: after Close,
// the file's final size.
func (f *FooterWriter) Size() int64 { return f.written }

// Close rewrites the footer with the "geo" key, writes the tail and closes
// the underlying writer. A stream that does not end in a Parquet footer
// (a file abandoned half-written) is passed through as it is.
func (f *FooterWriter) Close() error {
	if f.closed {
		return f.err
	}
	f.closed = true
	err := f.err
	if err == nil {
		err = f.finish()
	}
	return errors.Join(err, f.w.Close())
}

func (f *FooterWriter) finish() error {
	t := f.tail
	if len(t) < 12 || !bytes.Equal(t[len(t)-4:], parquetMagic) {
		return f.flush(t) // not a finished Parquet file: the writer is aborting it
	}
	doc, err := f.geo()
	if err != nil || (doc == nil && f.annotate == "") {
		return errors.Join(err, f.flush(t))
	}
	n := int(binary.LittleEndian.Uint32(t[len(t)-8:]))
	if n > len(t)-8 {
		return fmt.Errorf("%w: footer of %d bytes, more than the %d held", ErrFooter, n, len(t)-8)
	}
	start := len(t) - 8 - n
	meta, err := metadata.NewFileMetaData(t[start:len(t)-8], nil)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrFooter, err)
	}
	if meta.IsSetEncryptionAlgorithm() {
		return fmt.Errorf("%w: the footer is encrypted", ErrFooter)
	}
	if doc != nil {
		kv := metadata.NewKeyValueMetadata()
		for _, e := range meta.FileMetaData.KeyValueMetadata {
			if e.Key != GeoParquetKey {
				kv = append(kv, e)
			}
		}
		if err := kv.Append(GeoParquetKey, string(doc)); err != nil {
			return fmt.Errorf("%w: %v", ErrFooter, err)
		}
		meta.FileMetaData.KeyValueMetadata = kv
	}
	if f.annotate != "" {
		if err := annotateGeometry(meta, f.annotate, f.crs); err != nil {
			return err
		}
	}
	var buf bytes.Buffer
	buf.Write(t[:start])
	m, err := meta.WriteTo(&buf, nil)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrFooter, err)
	}
	buf.Write(binary.LittleEndian.AppendUint32(nil, uint32(m)))
	buf.Write(parquetMagic)
	return f.flush(buf.Bytes())
}

// annotateGeometry gives the top-level BYTE_ARRAY column named column the
// GEOMETRY logical type in meta's schema.
func annotateGeometry(meta *metadata.FileMetaData, column, crs string) error {
	elems := meta.FileMetaData.Schema
	if len(elems) == 0 {
		return fmt.Errorf("%w: the footer has no schema", ErrFooter)
	}
	// The thrift form of the logical type, built by the schema package
	// (the thrift types themselves are internal to arrow-go).
	node, err := schema.NewPrimitiveNodeLogical(column, parquet.Repetitions.Optional,
		schema.GeometryLogicalType{Crs: crs}, parquet.Types.ByteArray, -1, -1)
	if err != nil {
		return fmt.Errorf("%w: geometry type of %q: %v", ErrFooter, column, err)
	}
	root, err := schema.NewGroupNode("schema", parquet.Repetitions.Required, schema.FieldList{node}, -1)
	if err != nil {
		return fmt.Errorf("%w: geometry type of %q: %v", ErrFooter, column, err)
	}
	geometry := schema.ToThrift(root)[1].LogicalType
	i := 1
	for range elems[0].GetNumChildren() {
		if i >= len(elems) {
			break
		}
		e := elems[i]
		if e.GetName() == column && e.GetNumChildren() == 0 {
			if e.Type == nil || parquet.Type(*e.Type) != parquet.Types.ByteArray {
				return fmt.Errorf("%w: column %q is not BYTE_ARRAY", ErrFooter, column)
			}
			e.LogicalType = geometry
			e.ConvertedType = nil
			return nil
		}
		i = nextSibling(elems, i)
	}
	return fmt.Errorf("%w: no top-level column %q", ErrFooter, column)
}

// nextSibling returns the index of the element after the subtree at i in a
// depth-first list of schema elements.
func nextSibling[E interface{ GetNumChildren() int32 }](elems []E, i int) int {
	pending := 1
	for pending > 0 && i < len(elems) {
		pending += int(elems[i].GetNumChildren()) - 1
		i++
	}
	return i
}
