package deltatest

import (
	"fmt"
	"testing"

	"github.com/geocompact/geocompact/delta"
)

// Fragmented creates a table at dir as Create does and appends files data
// files of rows points each, one append per file, as a stream of small
// writes leaves a table. The points are spread over [0, 100) in x and y,
// the same for the same arguments.
func Fragmented(t testing.TB, dir string, files, rows int, o Options) *delta.Table {
	t.Helper()
	tbl := Create(t, dir, o)
	for i := range files {
		pts := make([]Row, rows)
		for j := range pts {
			pts[j] = Point(t, float64((i*37+j*11)%100), float64((i*13+j*7)%100))
		}
		Append(t, tbl, WriteFile(t, tbl, fmt.Sprintf("f%d.parquet", i), "", int64(i*rows), pts...))
	}
	return tbl
}
