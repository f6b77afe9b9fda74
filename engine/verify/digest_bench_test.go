package verify_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/geocompact/geocompact/engine/verify"
)

// BenchmarkDigestAdd digests a batch of 65,536 point rows whose columns
// carry validity bitmaps, one holding nulls (the name), as a table read
// from Parquet gives them.
func BenchmarkDigestAdd(b *testing.B) {
	rows := make([]row, 1<<16)
	for i := range rows {
		rows[i] = row{id: int64(i), name: "n", x: float64(i%1000) / 10, y: float64(i/1000) / 10, ok: i%100 != 0}
	}
	rec := batch(b, rows)
	geom, bbox := verify.Columns(rowSchema, "geometry")
	b.SetBytes(int64(len(rows)))
	b.ReportAllocs()
	for b.Loop() {
		d := verify.NewDigest()
		require.NoError(b, d.Add(rec, geom, bbox))
	}
}
