package spatial

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// benchValues returns n WKB values of the given kind with fixed seeds, and
// the total number of points they hold.
func benchValues(kind string, n int) ([][]byte, int) {
	rng := rand.New(rand.NewPCG(1, 2))
	out := make([][]byte, n)
	points := 0
	for i := range out {
		x, y := rng.Float64()*360-180, rng.Float64()*180-90
		switch kind {
		case "point":
			out[i] = le().hdr(1).f(x, y).bytes()
			points++
		case "polygon": // a 32-gon
			const k = 32
			w := le().hdr(3).u32(1).u32(k + 1)
			for j := range k + 1 {
				a := 2 * math.Pi * float64(j%k) / k
				w.f(x+0.01*math.Cos(a), y+0.01*math.Sin(a))
			}
			out[i] = w.bytes()
			points += k + 1
		case "linestring-be-z": // 16 points, big-endian, with Z
			w := be().hdr(1002).u32(16)
			for j := range 16 {
				w.f(x+float64(j)*1e-3, y, 10)
			}
			out[i] = w.bytes()
			points += 16
		}
	}
	return out, points
}

func BenchmarkEnvelope(b *testing.B) {
	for _, kind := range []string{"point", "polygon", "linestring-be-z"} {
		b.Run(fmt.Sprintf("kind=%s", kind), func(b *testing.B) {
			vals, points := benchValues(kind, 4096)
			var bytes int
			for _, v := range vals {
				bytes += len(v)
			}
			b.SetBytes(int64(bytes))
			b.ReportAllocs()
			cpu0 := cpuTime(b)
			for b.Loop() {
				for _, v := range vals {
					if _, err := Envelope(v); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(points)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mpoints/s")
			b.ReportMetric(float64(points)*float64(b.N)/(cpuTime(b)-cpu0).Seconds()/1e6, "Mpoints/cpu-s")
		})
	}
}

func BenchmarkDecodeWKB(b *testing.B) {
	for _, kind := range []string{"point", "polygon"} {
		b.Run(fmt.Sprintf("kind=%s", kind), func(b *testing.B) {
			vals, points := benchValues(kind, 1024)
			b.ReportAllocs()
			for b.Loop() {
				for _, v := range vals {
					if _, err := DecodeWKB(v); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(points)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mpoints/s")
		})
	}
}
