package spatial

import (
	"errors"
	"math"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEnvelope(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name string
		wkb  []byte
		want Bound
	}{
		{"point LE", le().hdr(1).f(1, 2).bytes(), Bound{1, 2, 1, 2}},
		{"point BE", be().hdr(1).f(-3, 4.5).bytes(), Bound{-3, 4.5, -3, 4.5}},
		{"point Z ISO", le().hdr(1001).f(1, 2, 99).bytes(), Bound{1, 2, 1, 2}},
		{"point M ISO", le().hdr(2001).f(1, 2, 99).bytes(), Bound{1, 2, 1, 2}},
		{"point ZM ISO", le().hdr(3001).f(1, 2, 99, 98).bytes(), Bound{1, 2, 1, 2}},
		{"point Z EWKB", le().hdr(0x80000001).f(1, 2, 99).bytes(), Bound{1, 2, 1, 2}},
		{"point ZM EWKB+SRID", be().hdr(0xE0000001).u32(4326).f(1, 2, 3, 4).bytes(), Bound{1, 2, 1, 2}},
		{"empty point (NaN)", le().hdr(1).f(nan, nan).bytes(), EmptyBound()},
		{"empty point Z (NaN)", le().hdr(1001).f(nan, nan, nan).bytes(), EmptyBound()},
		{
			"linestring",
			le().hdr(2).u32(3).f(0, 0, 10, -5, 3, 7).bytes(),
			Bound{0, -5, 10, 7},
		},
		{"empty linestring", le().hdr(2).u32(0).bytes(), EmptyBound()},
		{
			"polygon with hole, BE",
			be().hdr(3).u32(2).
				u32(5).f(0, 0, 10, 0, 10, 10, 0, 10, 0, 0).
				u32(4).f(2, 2, 3, 2, 2, 3, 2, 2).bytes(),
			Bound{0, 0, 10, 10},
		},
		{"empty polygon", le().hdr(3).u32(0).bytes(), EmptyBound()},
		{"polygon with one empty ring", le().hdr(3).u32(1).u32(0).bytes(), EmptyBound()},
		{
			"multipoint with empty member",
			le().hdr(4).u32(3).
				hdr(1).f(1, 1).
				hdr(1).f(nan, nan).
				hdr(1).f(-1, 5).bytes(),
			Bound{-1, 1, 1, 5},
		},
		{
			"multipoint mixed byte order members",
			le().hdr(4).u32(2).
				raw(be().hdr(1).f(7, 8).bytes()...).
				hdr(1).f(-7, -8).bytes(),
			Bound{-7, -8, 7, 8},
		},
		{
			"multilinestring Z",
			le().hdr(1005).u32(2).
				hdr(1002).u32(2).f(0, 0, 1, 1, 1, 1).
				hdr(1002).u32(2).f(5, 5, 1, 6, 4, 1).bytes(),
			Bound{0, 0, 6, 5},
		},
		{
			"multipolygon",
			le().hdr(6).u32(2).
				hdr(3).u32(1).u32(4).f(0, 0, 1, 0, 0, 1, 0, 0).
				hdr(3).u32(1).u32(4).f(10, 10, 11, 10, 10, 11, 10, 10).bytes(),
			Bound{0, 0, 11, 11},
		},
		{
			"nested collection",
			le().hdr(7).u32(2).
				hdr(1).f(100, -100).
				hdr(7).u32(1).hdr(2).u32(2).f(-1, 0, 0, 1).bytes(),
			Bound{-1, -100, 100, 1},
		},
		{"empty collection", le().hdr(7).u32(0).bytes(), EmptyBound()},
		{"negative zero closes ring", le().hdr(3).u32(1).u32(4).f(0, 0, 1, 0, 0, 1, math.Copysign(0, -1), 0).bytes(), Bound{0, 0, 1, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Envelope(tc.wkb)
			if err != nil {
				t.Fatalf("Envelope: %v", err)
			}
			if tc.want.IsEmpty() {
				if !got.IsEmpty() {
					t.Fatalf("got %v, want empty", got)
				}
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Envelope (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEnvelopeErrors(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		name   string
		wkb    []byte
		code   string
		offset int
	}{
		{"empty input", nil, WKBCodeTruncated, 0},
		{"header only", le().hdr(1).bytes(), WKBCodeTruncated, 5},
		{"bad byte order", []byte{2, 1, 0, 0, 0}, WKBCodeType, 0},
		{"unknown type", le().hdr(8).f(0, 0).bytes(), WKBCodeType, 1},
		{"type 0", le().hdr(0).bytes(), WKBCodeType, 1},
		{"type 4001", le().hdr(4001).f(0, 0).bytes(), WKBCodeType, 1},
		{"ISO and EWKB flags", le().hdr(0x80000000|1001).f(0, 0, 0).bytes(), WKBCodeType, 1},
		{"truncated point", le().hdr(1).f(1).bytes(), WKBCodeTruncated, 5},
		{"truncated SRID", le().hdr(0x20000001).raw(1, 2).bytes(), WKBCodeTruncated, 5},
		// 9 bytes claiming 2^27 points: must be refused before any work.
		{"lying count", le().hdr(2).u32(1 << 27).bytes(), WKBCodeTruncated, 5},
		{"max count", le().hdr(2).u32(math.MaxUint32).bytes(), WKBCodeTruncated, 5},
		{"lying ring count", le().hdr(3).u32(1 << 30).bytes(), WKBCodeTruncated, 5},
		{"lying member count", le().hdr(7).u32(1 << 30).bytes(), WKBCodeTruncated, 5},
		{"count one short", le().hdr(2).u32(3).f(0, 0, 1, 1, 2).bytes(), WKBCodeTruncated, 5},
		{"trailing byte", le().hdr(1).f(1, 2).raw(0).bytes(), WKBCodeTrailing, 21},
		{"NaN x", le().hdr(1).f(nan, 2).bytes(), WKBCodeNonFinite, 5},
		{"Inf y", le().hdr(1).f(1, inf).bytes(), WKBCodeNonFinite, 5},
		{"Inf z", le().hdr(1001).f(1, 2, inf).bytes(), WKBCodeNonFinite, 21},
		{"NaN in line", le().hdr(2).u32(2).f(0, 0, nan, 1).bytes(), WKBCodeNonFinite, 25},
		{"NaN z in line", le().hdr(1002).u32(2).f(0, 0, 0, 1, 1, nan).bytes(), WKBCodeNonFinite, 49},
		{"ring open", le().hdr(3).u32(1).u32(4).f(0, 0, 1, 0, 1, 1, 0, 1).bytes(), WKBCodeRingOpen, 9},
		{"ring short", le().hdr(3).u32(1).u32(3).f(0, 0, 1, 0, 0, 0).bytes(), WKBCodeRingShort, 9},
		{"point in multilinestring", le().hdr(5).u32(1).hdr(1).f(0, 0).bytes(), WKBCodeType, 10},
		{"truncated member", le().hdr(4).u32(2).hdr(1).f(0, 0).raw(1, 1).bytes(), WKBCodeTruncated, 30},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Envelope(tc.wkb)
			if err == nil {
				t.Fatalf("Envelope = %v, want error %s", b, tc.code)
			}
			if !errors.Is(err, ErrInvalidWKB) {
				t.Errorf("error %v does not wrap ErrInvalidWKB", err)
			}
			we, ok := errors.AsType[*WKBError](err)
			if !ok {
				t.Fatalf("error %T is not *WKBError", err)
			}
			if we.Code != tc.code || we.Offset != tc.offset {
				t.Errorf("got code %s offset %d (%v), want %s at %d", we.Code, we.Offset, err, tc.code, tc.offset)
			}
		})
	}
}

func TestEnvelopeDeepNesting(t *testing.T) {
	w := le()
	for range MaxWKBDepth + 2 {
		w.hdr(7).u32(1)
	}
	w.hdr(1).f(0, 0)
	_, err := Envelope(w.bytes())
	we, ok := errors.AsType[*WKBError](err)
	if !ok || we.Code != WKBCodeDepth {
		t.Fatalf("got %v, want %s", err, WKBCodeDepth)
	}
}

func TestEnvelopeAllocs(t *testing.T) {
	poly := le().hdr(3).u32(1).u32(5).f(0, 0, 10, 0, 10, 10, 0, 10, 0, 0).bytes()
	if n := testing.AllocsPerRun(100, func() { _, _ = Envelope(poly) }); n != 0 {
		t.Errorf("Envelope allocates %v times per call, want 0", n)
	}
}

// TestDecodeWKBLyingCountAllocatesNothing feeds DecodeWKB the 9-byte
// header that made go-geom's decoder allocate 4.6 GB.
func TestDecodeWKBLyingCountAllocatesNothing(t *testing.T) {
	for _, b := range [][]byte{
		le().hdr(2).u32(1 << 27).bytes(),
		le().hdr(3).u32(1<<31 - 1).bytes(),
		le().hdr(6).u32(1 << 30).bytes(),
		le().hdr(4).u32(1).hdr(1).f(0, 0).raw(0xff).bytes(),
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := DecodeWKB(b)
		runtime.ReadMemStats(&after)
		if err == nil {
			t.Fatalf("DecodeWKB(%x) accepted", b)
		}
		if d := after.TotalAlloc - before.TotalAlloc; d > 64<<10 {
			t.Errorf("DecodeWKB(%x) allocated %d bytes", b, d)
		}
	}
}
