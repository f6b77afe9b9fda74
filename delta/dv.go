package delta

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"strconv"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/RoaringBitmap/roaring/v2/roaring64"
)

// DeletionVector is the descriptor of a file's deleted rows.
type DeletionVector struct {
	// StorageType is 'u' (file named by a UUID, relative to the table), 'i'
	// (inline, Z85) or 'p' (absolute path).
	StorageType    string `json:"storageType"`
	PathOrInlineDv string `json:"pathOrInlineDv"`
	// Offset is where the vector starts in its file; absent means 0.
	Offset      *int32 `json:"offset,omitempty"`
	SizeInBytes int32  `json:"sizeInBytes"`
	Cardinality int64  `json:"cardinality"`
	MaxRowIndex *int64 `json:"maxRowIndex,omitempty"`
}

// Magic numbers of the two bitmap array layouts: the portable one the
// protocol specifies (little endian), and the older native one (big endian,
// as in the protocol's inline example), which is still read.
const (
	dvMagic       = 1681511377
	dvMagicNative = 1681511376
)

// UniqueID identifies the vector for log reconciliation.
func (d *DeletionVector) UniqueID() string {
	id := d.StorageType + d.PathOrInlineDv
	if d.Offset != nil {
		id += "@" + strconv.Itoa(int(*d.Offset))
	}
	return id
}

// FilePath returns the path of the file holding the vector: relative to the
// table root for 'u', as given for 'p'. Inline vectors have none.
func (d *DeletionVector) FilePath() (string, error) {
	switch d.StorageType {
	case "u":
		s := d.PathOrInlineDv
		if len(s) < 20 {
			return "", fmt.Errorf("deletion vector %q: shorter than a 20-character UUID", s)
		}
		prefix, enc := s[:len(s)-20], s[len(s)-20:]
		raw, err := decodeZ85(enc)
		if err != nil {
			return "", fmt.Errorf("deletion vector %q: %w", s, err)
		}
		name := "deletion_vector_" + formatUUID(raw) + ".bin"
		if prefix != "" {
			return prefix + "/" + name, nil
		}
		return name, nil
	case "p":
		return decodePath(d.PathOrInlineDv)
	case "i":
		return "", fmt.Errorf("deletion vector is inline and has no file")
	}
	return "", fmt.Errorf("deletion vector: unknown storage type %q", d.StorageType)
}

// Path returns the canonical path (Root.Canonical) of the file holding
// the vector in the table at root, and whether it is inside the table: a
// 'u' vector's file always is (its prefix cannot leave the root), a 'p'
// vector's is when its absolute path points there.
func (d *DeletionVector) Path(root Root) (string, bool, error) {
	p, err := d.FilePath()
	if err != nil {
		return "", false, err
	}
	if d.StorageType == "p" {
		return root.Canonical(d.PathOrInlineDv)
	}
	return relativePath(p, p)
}

func formatUUID(b []byte) string {
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// Load reads the vector's row indexes. File-based vectors are read from st,
// their size and CRC-32 checked; the cardinality is checked for all.
func (d *DeletionVector) Load(ctx context.Context, st Storage) (*roaring64.Bitmap, error) {
	var data []byte
	var err error
	if d.StorageType == "i" {
		data, err = decodeZ85(d.PathOrInlineDv)
		if err == nil && int(d.SizeInBytes) <= len(data) {
			data = data[:d.SizeInBytes]
		}
	} else {
		data, err = d.readFromFile(ctx, st)
	}
	if err != nil {
		return nil, fmt.Errorf("load deletion vector %s: %w", d.UniqueID(), err)
	}
	bm, err := decodeBitmap(data)
	if err != nil {
		return nil, fmt.Errorf("load deletion vector %s: %w", d.UniqueID(), err)
	}
	if int64(bm.GetCardinality()) != d.Cardinality {
		return nil, fmt.Errorf("load deletion vector %s: holds %d rows, descriptor says %d",
			d.UniqueID(), bm.GetCardinality(), d.Cardinality)
	}
	return bm, nil
}

func (d *DeletionVector) readFromFile(ctx context.Context, st Storage) ([]byte, error) {
	p, _, err := d.Path(st.TableRoot())
	if err != nil {
		return nil, err
	}
	f, err := st.Open(ctx, p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	off := int64(0)
	if d.Offset != nil {
		off = int64(*d.Offset)
	}
	if d.SizeInBytes < 0 {
		return nil, fmt.Errorf("negative size %d", d.SizeInBytes)
	}
	if off < 0 {
		return nil, fmt.Errorf("%s: negative offset %d", p, off)
	}
	// The descriptor comes from the log: its size is checked against the
	// file's before anything is allocated for it.
	end, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, fmt.Errorf("size of %s: %w", p, err)
	}
	if need := off + 4 + int64(d.SizeInBytes) + 4; need > end {
		return nil, fmt.Errorf("%s: deletion vector of %d bytes at offset %d runs past the file's end (%d bytes)", p, d.SizeInBytes, off, end)
	}
	buf := make([]byte, 4+int(d.SizeInBytes)+4)
	if _, err := f.ReadAt(buf, off); err != nil && err != io.EOF {
		return nil, fmt.Errorf("read %s at %d: %w", p, off, err)
	}
	size := binary.BigEndian.Uint32(buf[:4])
	if size != uint32(d.SizeInBytes) {
		return nil, fmt.Errorf("%s at %d: size %d, descriptor says %d", p, off, size, d.SizeInBytes)
	}
	data := buf[4 : 4+size]
	if got, want := crc32.ChecksumIEEE(data), binary.BigEndian.Uint32(buf[4+size:]); got != want {
		return nil, fmt.Errorf("%s at %d: checksum %08x, stored %08x", p, off, got, want)
	}
	return data, nil
}

// decodeBitmap decodes Delta's serialised bitmap: the magic number, then a
// 64-bit roaring bitmap in the portable format (little endian).
func decodeBitmap(data []byte) (*roaring64.Bitmap, error) {
	if len(data) < 12 {
		return nil, fmt.Errorf("bitmap of %d bytes is too short", len(data))
	}
	if binary.BigEndian.Uint32(data) == dvMagicNative {
		return decodeNativeBitmap(data[4:])
	}
	if m := binary.LittleEndian.Uint32(data); m != dvMagic {
		return nil, fmt.Errorf("bitmap magic number %d, want %d", m, dvMagic)
	}
	body := data[4:]
	// Each bucket takes at least a 4-byte key and an 8-byte roaring header:
	// refuse counts the data cannot hold before the library allocates for them.
	if n := binary.LittleEndian.Uint64(body); n > uint64(len(body)-8)/12 {
		return nil, fmt.Errorf("bitmap claims %d buckets in %d bytes", n, len(body))
	}
	bm := roaring64.New()
	if _, err := bm.ReadFrom(bytes.NewReader(body)); err != nil {
		return nil, fmt.Errorf("decode bitmap: %w", err)
	}
	return bm, nil
}

// decodeNativeBitmap reads the native layout: a big-endian count, then for
// bucket i (the high 32 bits) a big-endian size and a 32-bit roaring bitmap.
func decodeNativeBitmap(body []byte) (*roaring64.Bitmap, error) {
	n := binary.BigEndian.Uint32(body)
	body = body[4:]
	if uint64(n) > uint64(len(body))/4 {
		return nil, fmt.Errorf("bitmap claims %d buckets in %d bytes", n, len(body))
	}
	out := roaring64.New()
	for i := uint32(0); i < n; i++ {
		if len(body) < 4 {
			return nil, fmt.Errorf("bitmap bucket %d: truncated", i)
		}
		size := binary.BigEndian.Uint32(body)
		if uint64(size) > uint64(len(body)-4) {
			return nil, fmt.Errorf("bitmap bucket %d: %d bytes claimed, %d left", i, size, len(body)-4)
		}
		b := roaring.New()
		if _, err := b.FromBuffer(body[4 : 4+size]); err != nil {
			return nil, fmt.Errorf("bitmap bucket %d: %w", i, err)
		}
		high := uint64(i) << 32
		it := b.Iterator()
		for it.HasNext() {
			out.Add(high | uint64(it.Next()))
		}
		body = body[4+size:]
	}
	return out, nil
}

// encodeBitmap serialises rows as Delta does: magic number and portable
// 64-bit roaring bitmap.
func encodeBitmap(rows *roaring64.Bitmap) ([]byte, error) {
	var buf bytes.Buffer
	_ = binary.Write(&buf, binary.LittleEndian, uint32(dvMagic))
	if _, err := rows.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("encode bitmap: %w", err)
	}
	return buf.Bytes(), nil
}

// InlineDeletionVector returns an inline ('i') descriptor for rows.
func InlineDeletionVector(rows *roaring64.Bitmap) (*DeletionVector, error) {
	data, err := encodeBitmap(rows)
	if err != nil {
		return nil, err
	}
	return &DeletionVector{StorageType: "i", PathOrInlineDv: encodeZ85(data),
		SizeInBytes: int32(len(data)), Cardinality: int64(rows.GetCardinality())}, nil
}
