package reliability

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/apache/thrift/lib/go/thrift"
)

// Parquet footer field paths (thrift field ids from FileMetaData down), the
// fields a hostile footer lies about.
var (
	FieldNumRows             = []int16{3}          // FileMetaData.num_rows
	FieldRowGroupBytes       = []int16{4, 2}       // RowGroup.total_byte_size
	FieldRowGroupRows        = []int16{4, 3}       // RowGroup.num_rows
	FieldChunkCompressedSize = []int16{4, 1, 3, 7} // ColumnMetaData.total_compressed_size
	FieldChunkDataPageOffset = []int16{4, 1, 3, 9} // ColumnMetaData.data_page_offset
)

// HostileFooter is one way a Parquet footer can lie about the file.
type HostileFooter struct {
	Name string
	// Field and Value set every occurrence of an integer footer field.
	Field []int16
	Value int64
	// FooterLength, when non-zero, replaces the trailer's footer length.
	FooterLength uint32
	// Truncate cuts the footer's thrift bytes to half, keeping the trailer
	// consistent with the new length.
	Truncate bool
}

// HostileFooters is the set every reading command is tested against.
func HostileFooters() []HostileFooter {
	return []HostileFooter{
		{Name: "huge-chunk", Field: FieldChunkCompressedSize, Value: 1 << 40},
		{Name: "negative-chunk-size", Field: FieldChunkCompressedSize, Value: -4096},
		{Name: "offset-past-eof", Field: FieldChunkDataPageOffset, Value: 1 << 40},
		{Name: "negative-offset", Field: FieldChunkDataPageOffset, Value: -1},
		{Name: "huge-row-group-rows", Field: FieldRowGroupRows, Value: 1 << 50},
		{Name: "negative-row-group-bytes", Field: FieldRowGroupBytes, Value: -1},
		{Name: "footer-length-past-start", FooterLength: 1<<31 - 1},
		{Name: "truncated-footer", Truncate: true},
	}
}

// Apply returns a copy of a valid Parquet file with its footer made
// hostile.
func (h HostileFooter) Apply(file []byte) ([]byte, error) {
	meta, body, err := splitFooter(file)
	if err != nil {
		return nil, err
	}
	switch {
	case h.Truncate:
		meta = meta[:len(meta)/2]
	case h.Field != nil:
		n := 0
		meta, err = EditFooter(meta, func(path []int16, v int64) int64 {
			if slices.Equal(path, h.Field) {
				n++
				return h.Value
			}
			return v
		})
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, fmt.Errorf("footer has no field %v", h.Field)
		}
	}
	out := append(slices.Clip(body), meta...)
	n := uint32(len(meta))
	if h.FooterLength != 0 {
		n = h.FooterLength
	}
	out = binary.LittleEndian.AppendUint32(out, n)
	return append(out, "PAR1"...), nil
}

// splitFooter returns a Parquet file's thrift footer and everything
// before it.
func splitFooter(file []byte) (meta, body []byte, err error) {
	if len(file) < 12 || !bytes.Equal(file[len(file)-4:], []byte("PAR1")) {
		return nil, nil, errors.New("not a Parquet file")
	}
	n := int(binary.LittleEndian.Uint32(file[len(file)-8:]))
	if n > len(file)-12 {
		return nil, nil, errors.New("footer longer than the file")
	}
	end := len(file) - 8
	return file[end-n : end], file[:end-n], nil
}

// EditFooter re-encodes a thrift compact FileMetaData, passing every
// integer field through edit with its field-id path.
func EditFooter(meta []byte, edit func(path []int16, v int64) int64) ([]byte, error) {
	ctx := context.Background()
	conf := &thrift.TConfiguration{}
	in := thrift.NewTCompactProtocolConf(&thrift.TMemoryBuffer{Buffer: bytes.NewBuffer(meta)}, conf)
	buf := thrift.NewTMemoryBuffer()
	out := thrift.NewTCompactProtocolConf(buf, conf)
	c := copier{ctx: ctx, in: in, out: out, edit: edit}
	if err := c.value(thrift.STRUCT, nil); err != nil {
		return nil, err
	}
	if err := out.Flush(ctx); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

type copier struct {
	ctx     context.Context
	in, out *thrift.TCompactProtocol
	edit    func(path []int16, v int64) int64
}

func (c copier) value(t thrift.TType, path []int16) error {
	ctx, in, out := c.ctx, c.in, c.out
	switch t {
	case thrift.BOOL:
		v, err := in.ReadBool(ctx)
		if err != nil {
			return err
		}
		return out.WriteBool(ctx, v)
	case thrift.BYTE:
		v, err := in.ReadByte(ctx)
		if err != nil {
			return err
		}
		return out.WriteByte(ctx, v)
	case thrift.I16:
		v, err := in.ReadI16(ctx)
		if err != nil {
			return err
		}
		return out.WriteI16(ctx, int16(c.edit(path, int64(v))))
	case thrift.I32:
		v, err := in.ReadI32(ctx)
		if err != nil {
			return err
		}
		return out.WriteI32(ctx, int32(c.edit(path, int64(v))))
	case thrift.I64:
		v, err := in.ReadI64(ctx)
		if err != nil {
			return err
		}
		return out.WriteI64(ctx, c.edit(path, v))
	case thrift.DOUBLE:
		v, err := in.ReadDouble(ctx)
		if err != nil {
			return err
		}
		return out.WriteDouble(ctx, v)
	case thrift.STRING:
		v, err := in.ReadBinary(ctx)
		if err != nil {
			return err
		}
		return out.WriteBinary(ctx, v)
	case thrift.STRUCT:
		return c.structure(path)
	case thrift.LIST, thrift.SET, thrift.MAP:
		return c.container(t, path)
	}
	return fmt.Errorf("thrift type %d not supported", t)
}

// container copies a list, set or map value, element by element.
func (c copier) container(t thrift.TType, path []int16) error {
	ctx, in, out := c.ctx, c.in, c.out
	if t != thrift.MAP {
		et, n, err := in.ReadListBegin(ctx)
		if err != nil {
			return err
		}
		if err := out.WriteListBegin(ctx, et, n); err != nil {
			return err
		}
		for range n {
			if err := c.value(et, path); err != nil {
				return err
			}
		}
		return nil
	}
	kt, vt, n, err := in.ReadMapBegin(ctx)
	if err != nil {
		return err
	}
	if err := out.WriteMapBegin(ctx, kt, vt, n); err != nil {
		return err
	}
	for range n {
		if err := c.value(kt, path); err != nil {
			return err
		}
		if err := c.value(vt, path); err != nil {
			return err
		}
	}
	return nil
}

func (c copier) structure(path []int16) error {
	if _, err := c.in.ReadStructBegin(c.ctx); err != nil {
		return err
	}
	if err := c.out.WriteStructBegin(c.ctx, ""); err != nil {
		return err
	}
	for {
		_, t, id, err := c.in.ReadFieldBegin(c.ctx)
		if err != nil {
			return err
		}
		if t == thrift.STOP {
			break
		}
		if err := c.out.WriteFieldBegin(c.ctx, "", t, id); err != nil {
			return err
		}
		if err := c.value(t, append(slices.Clip(path), id)); err != nil {
			return err
		}
		if err := c.out.WriteFieldEnd(c.ctx); err != nil {
			return err
		}
	}
	if err := c.in.ReadStructEnd(c.ctx); err != nil {
		return err
	}
	if err := c.out.WriteFieldStop(c.ctx); err != nil {
		return err
	}
	return c.out.WriteStructEnd(c.ctx)
}
