package spatial_test

import (
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/twpayne/go-geom"

	"github.com/geocompact/geocompact/spatial"
)

func ExampleDecodeWKB() {
	// POINT(1 2) as little-endian ISO WKB:
	// 01 (little-endian) 01000000 (Point) then x and y as float64.
	b, _ := hex.DecodeString("0101000000000000000000f03f0000000000000040")
	g, err := spatial.DecodeWKB(b)
	if err != nil {
		panic(err)
	}
	p := g.(*geom.Point)
	fmt.Println(p.X(), p.Y(), spatial.BoundOf(g))

	// A 9-byte LineString header that claims 2^27 points is refused before
	// anything is allocated for it.
	_, err = spatial.DecodeWKB([]byte{1, 2, 0, 0, 0, 0, 0, 0, 8})
	var we *spatial.WKBError
	fmt.Println(errors.As(err, &we), we.Code, we.Offset)
	// Output:
	// 1 2 {1 2 1 2}
	// true wkb.truncated 5
}

func ExampleEnvelope() {
	// POLYGON((0 0, 4 0, 4 3, 0 0)), big-endian.
	b, _ := hex.DecodeString("0000000003000000010000000400000000000000000000000000000000401000000000000000000000000000004010000000000000400800000000000000000000000000000000000000000000")
	env, err := spatial.Envelope(b)
	fmt.Println(env, err)
	// Output:
	// {0 0 4 3} <nil>
}
