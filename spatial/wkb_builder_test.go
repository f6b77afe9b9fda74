package spatial

import (
	"encoding/binary"
	"math"
)

// wb builds WKB byte strings for tests, one field at a time, so fixtures can
// describe malformed values that no encoder would produce.
type wb struct {
	order binary.AppendByteOrder
	buf   []byte
}

func newWB(big bool) *wb {
	if big {
		return &wb{order: binary.BigEndian, buf: nil}
	}
	return &wb{order: binary.LittleEndian}
}

// hdr appends a byte-order flag and a raw type code.
func (w *wb) hdr(code uint32) *wb {
	if w.order == binary.AppendByteOrder(binary.BigEndian) {
		w.buf = append(w.buf, 0)
	} else {
		w.buf = append(w.buf, 1)
	}
	w.buf = w.order.AppendUint32(w.buf, code)
	return w
}

// u32 appends a count or SRID.
func (w *wb) u32(v uint32) *wb {
	w.buf = w.order.AppendUint32(w.buf, v)
	return w
}

// f appends ordinates.
func (w *wb) f(vs ...float64) *wb {
	for _, v := range vs {
		w.buf = w.order.AppendUint64(w.buf, math.Float64bits(v))
	}
	return w
}

// raw appends arbitrary bytes.
func (w *wb) raw(b ...byte) *wb {
	w.buf = append(w.buf, b...)
	return w
}

func (w *wb) bytes() []byte { return w.buf }

func le() *wb { return newWB(false) }
func be() *wb { return newWB(true) }
