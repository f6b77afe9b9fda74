package delta

import (
	"encoding/binary"
	"fmt"
)

// Z85 is the Base85 variant of ZeroMQ RFC 32, which Delta uses for inline
// deletion vectors and for the UUIDs of deletion vector file names.
const z85Alphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"

var z85Decode = func() [256]int16 {
	var t [256]int16
	for i := range t {
		t[i] = -1
	}
	for i := 0; i < len(z85Alphabet); i++ {
		t[z85Alphabet[i]] = int16(i)
	}
	return t
}()

// decodeZ85 decodes s, whose length must be a multiple of 5, into
// len(s)/5*4 bytes.
func decodeZ85(s string) ([]byte, error) {
	if len(s)%5 != 0 {
		return nil, fmt.Errorf("z85: length %d is not a multiple of 5", len(s))
	}
	out := make([]byte, 0, len(s)/5*4)
	for i := 0; i < len(s); i += 5 {
		var v uint64
		for j := 0; j < 5; j++ {
			d := z85Decode[s[i+j]]
			if d < 0 {
				return nil, fmt.Errorf("z85: invalid character %q at %d", s[i+j], i+j)
			}
			v = v*85 + uint64(d)
		}
		if v > 0xFFFFFFFF {
			return nil, fmt.Errorf("z85: group at %d overflows 32 bits", i)
		}
		out = binary.BigEndian.AppendUint32(out, uint32(v))
	}
	return out, nil
}

// encodeZ85 encodes b, padded with zero bytes to a multiple of 4.
func encodeZ85(b []byte) string {
	padded := b
	if r := len(b) % 4; r != 0 {
		padded = append(append([]byte(nil), b...), make([]byte, 4-r)...)
	}
	out := make([]byte, 0, len(padded)/4*5)
	for i := 0; i < len(padded); i += 4 {
		v := binary.BigEndian.Uint32(padded[i:])
		var grp [5]byte
		for j := 4; j >= 0; j-- {
			grp[j] = z85Alphabet[v%85]
			v /= 85
		}
		out = append(out, grp[:]...)
	}
	return string(out)
}
