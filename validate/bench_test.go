package validate_test

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/geocompact/geocompact/spatial"
	"github.com/geocompact/geocompact/validate"
	"github.com/geocompact/geocompact/validate/validatetest"
)

// cpuTime is the process's CPU time, so throughput can be reported per
// CPU-second as well as per wall-clock second on a busy machine.
func cpuTime(tb testing.TB) time.Duration {
	tb.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchRows returns n rows of points or 16-gon polygons with exact bboxes,
// from a fixed seed.
func benchRows(kind string, n int) []validatetest.Row {
	rng := rand.New(rand.NewPCG(3, 4))
	rows := make([]validatetest.Row, n)
	for i := range rows {
		x, y := rng.Float64()*350-175, rng.Float64()*170-85
		switch kind {
		case "points":
			rows[i] = validatetest.Row{WKB: validatetest.Point(x, y), BBox: validatetest.Box(x, y, x, y)}
		case "polygons":
			w := validatetest.LE().Hdr(3).N(1).N(17)
			b := spatial.EmptyBound()
			for j := range 17 {
				px, py := x+float64(j%16%4)*0.01, y+float64(j%16/4)*0.01
				if j == 16 {
					px, py = x, y
				}
				w.F(px, py)
				b = b.ExtendPoint(px, py)
			}
			rows[i] = validatetest.Row{WKB: w.Buf, BBox: validatetest.Box(b.MinX, b.MinY, b.MaxX, b.MaxY)}
		}
	}
	return rows
}

func reportRows(b *testing.B, rows int, cpu0 time.Duration) {
	total := float64(rows) * float64(b.N)
	b.ReportMetric(total/b.Elapsed().Seconds()/1e6, "Mrows/s")
	b.ReportMetric(total/(cpuTime(b)-cpu0).Seconds()/1e6, "Mrows/cpu-s")
}

// BenchmarkFile validates a whole GeoParquet file: Parquet decoding of the
// geometry and bbox columns, envelope, bbox comparison.
func BenchmarkFile(b *testing.B) {
	for _, kind := range []string{"points", "polygons"} {
		const n = 200_000
		b.Run(fmt.Sprintf("kind=%s/rows=%d", kind, n), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "f.parquet")
			validatetest.Write(b, path, validatetest.File{Rows: benchRows(kind, n), Geo: validatetest.Geo(""), RowGroupRows: 1 << 17, Extra: true})
			cfg := validate.DefaultConfig()
			b.ReportAllocs()
			cpu0 := cpuTime(b)
			for b.Loop() {
				rep, err := validate.File(b.Context(), path, cfg)
				if err != nil || !rep.OK() || rep.Rows != n {
					b.Fatalf("%v %+v", err, rep)
				}
			}
			reportRows(b, n, cpu0)
		})
	}
}

// BenchmarkBatch validates an in-memory Arrow batch: the checks alone.
func BenchmarkBatch(b *testing.B) {
	for _, kind := range []string{"points", "polygons"} {
		const n = 100_000
		b.Run(fmt.Sprintf("kind=%s/rows=%d", kind, n), func(b *testing.B) {
			rec := validatetest.File{Rows: benchRows(kind, n)}.Record()
			defer rec.Release()
			cols := spatial.Columns{Geometry: "geometry", Encoding: spatial.EncodingWKB, CRS: spatial.DefaultCRS, BBox: spatial.BBoxColumns}
			cfg := validate.DefaultConfig()
			b.ReportAllocs()
			cpu0 := cpuTime(b)
			for b.Loop() {
				if rep := validate.Batch(rec, cols, cfg); !rep.OK() {
					b.Fatalf("%+v", rep)
				}
			}
			reportRows(b, n, cpu0)
		})
	}
}
