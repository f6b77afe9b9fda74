package cluster

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gonum.org/v1/gonum/spatial/curve"

	"github.com/geocompact/geocompact/spatial"
)

// benchPoints is a fixed set of random grid cells; benchmarks cycle
// through it so that the inputs are not constant.
const benchPoints = 1 << 12

func randomCells(order int) (xs, ys []uint32) {
	rng := rand.New(rand.NewPCG(1, 2))
	mask := uint32(1<<order - 1)
	xs, ys = make([]uint32, benchPoints), make([]uint32, benchPoints)
	for i := range xs {
		xs[i], ys[i] = rng.Uint32()&mask, rng.Uint32()&mask
	}
	return xs, ys
}

var sink uint64

// BenchmarkHilbert2D measures one 2-D index (32 bits per axis unless
// noted) per op, ours beside the references.
func BenchmarkHilbert2D(b *testing.B) {
	xs, ys := randomCells(32)
	b.Run("prefix-scan", func(b *testing.B) {
		var s uint64
		i := 0
		defer cpuMeter(b, 1).report()
		for b.Loop() {
			s += hilbert2(xs[i%benchPoints], ys[i%benchPoints])
			i++
		}
		sink = s
	})
	b.Run("skilling", func(b *testing.B) {
		var s uint64
		var p [2]uint32
		i := 0
		defer cpuMeter(b, 1).report()
		for b.Loop() {
			p[0], p[1] = xs[i%benchPoints], ys[i%benchPoints]
			s += skilling(p[:], 32)
			i++
		}
		sink = s
	})
	b.Run("textbook", func(b *testing.B) {
		var s uint64
		i := 0
		defer cpuMeter(b, 1).report()
		for b.Loop() {
			s += refHilbert2(32, uint64(xs[i%benchPoints]), uint64(ys[i%benchPoints]))
			i++
		}
		sink = s
	})
	b.Run("gonum-order31", func(b *testing.B) {
		g, _ := curve.NewHilbert2D(31)
		v := make([]int, 2)
		var s uint64
		i := 0
		defer cpuMeter(b, 1).report()
		for b.Loop() {
			v[0], v[1] = int(ys[i%benchPoints]>>1), int(xs[i%benchPoints]>>1)
			s += uint64(g.Pos(v))
			i++
		}
		sink = s
	})
	b.Run("decode", func(b *testing.B) {
		var s uint64
		i := 0
		defer cpuMeter(b, 1).report()
		for b.Loop() {
			x, y := hilbert2Decode(uint64(xs[i%benchPoints])<<32 | uint64(ys[i%benchPoints]))
			s += uint64(x ^ y)
			i++
		}
		sink = s
	})
}

// BenchmarkZOrder2D measures one 2-D Morton code per op.
func BenchmarkZOrder2D(b *testing.B) {
	xs, ys := randomCells(32)
	z, _ := NewZOrder(spatial.World, 32)
	var s uint64
	i := 0
	defer cpuMeter(b, 1).report()
	for b.Loop() {
		s += z.Encode(xs[i%benchPoints], ys[i%benchPoints])
		i++
	}
	sink = s
}

// BenchmarkHilbertND measures Skilling's method for 3 and 4 dimensions.
func BenchmarkHilbertND(b *testing.B) {
	for _, dims := range []int{3, 4} {
		b.Run(fmt.Sprintf("dims=%d", dims), func(b *testing.B) {
			bits := 64 / dims
			xs, ys := randomCells(bits)
			p := make([]uint32, dims)
			var s uint64
			i := 0
			defer cpuMeter(b, 1).report()
			for b.Loop() {
				for d := range p {
					p[d] = xs[(i+d)%benchPoints] ^ ys[i%benchPoints]
				}
				s += skilling(p, bits)
				i++
			}
			sink = s
		})
	}
}

func randomBounds(rng *rand.Rand, n int) []spatial.Bound {
	out := make([]spatial.Bound, n)
	for i := range out {
		x, y := rng.Float64()*360-180, rng.Float64()*180-90
		out[i] = spatial.Bound{MinX: x, MinY: y, MaxX: x + rng.Float64()*0.01, MaxY: y + rng.Float64()*0.01}
	}
	return out
}

// BenchmarkKeyer measures Keyer.Key on a box: centre, normalise, index.
func BenchmarkKeyer(b *testing.B) {
	boxes := randomBounds(rand.New(rand.NewPCG(1, 2)), benchPoints)
	h, _ := NewHilbert(spatial.World, 32)
	z, _ := NewZOrder(spatial.World, 32)
	for _, k := range []struct {
		name string
		k    Keyer
	}{{"hilbert", h}, {"zorder", z}} {
		b.Run(k.name, func(b *testing.B) {
			var s uint64
			i := 0
			defer cpuMeter(b, 1).report()
			for b.Loop() {
				s += k.k.Key(boxes[i%benchPoints])
				i++
			}
			sink = s
		})
	}
}

// benchSizes are the row counts of the sorting benchmarks. The 10M case
// is the target: keys and permutation within 1.5 s and 200 MB.
var benchSizes = []int{100_000, 1_000_000, 10_000_000}

// BenchmarkSortKeys measures the radix sort alone on random keys.
func BenchmarkSortKeys(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			src := make([]uint64, n)
			for i := range src {
				src[i] = rng.Uint64()
			}
			keys, rows := make([]uint64, n), make([]int32, n)
			b.ReportAllocs()
			clk := cpuMeter(b, n)
			defer clk.report()
			for b.Loop() {
				b.StopTimer()
				clk.pause()
				copy(keys, src)
				for i := range rows {
					rows[i] = int32(i)
				}
				clk.resume()
				b.StartTimer()
				SortKeys(keys, rows)
			}
		})
	}
	b.Run("n=1000000/slices.SortStableFunc", func(b *testing.B) {
		rng := rand.New(rand.NewPCG(1, 2))
		n := 1_000_000
		src := make([]uint64, n)
		for i := range src {
			src[i] = rng.Uint64()
		}
		rows := make([]int32, n)
		defer cpuMeter(b, n).report()
		for b.Loop() {
			for i := range rows {
				rows[i] = int32(i)
			}
			slices.SortStableFunc(rows, func(a, c int32) int { return cmpU64(src[a], src[c]) })
		}
	})
}

// bboxBatches returns n random rows of the four bbox columns in batches of
// 64Ki rows.
func bboxBatches(b *testing.B, n int) (*arrow.Schema, []arrow.RecordBatch) {
	b.Helper()
	var fields []arrow.Field
	for _, c := range spatial.BBoxColumns {
		fields = append(fields, arrow.Field{Name: c, Type: arrow.PrimitiveTypes.Float64})
	}
	schema := arrow.NewSchema(fields, nil)
	rng := rand.New(rand.NewPCG(1, 2))
	var recs []arrow.RecordBatch
	for off := 0; off < n; off += 1 << 16 {
		m := min(n-off, 1<<16)
		bld := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		for _, box := range randomBounds(rng, m) {
			bld.Field(0).(*array.Float64Builder).Append(box.MinX)
			bld.Field(1).(*array.Float64Builder).Append(box.MinY)
			bld.Field(2).(*array.Float64Builder).Append(box.MaxX)
			bld.Field(3).(*array.Float64Builder).Append(box.MaxY)
		}
		recs = append(recs, bld.NewRecordBatch())
		bld.Release()
	}
	b.Cleanup(func() {
		for _, r := range recs {
			r.Release()
		}
	})
	return schema, recs
}

// BenchmarkKeysAndPermutation measures what Sort does before gathering:
// the key column of every row (bbox columns → centre → grid → Hilbert or
// Z-order index, or str slab and y) and the sorted permutation, over
// 64Ki-row batches.
func BenchmarkKeysAndPermutation(b *testing.B) {
	for _, n := range benchSizes {
		for _, c := range []string{"hilbert", "zorder", "str"} {
			b.Run(fmt.Sprintf("%s/n=%d", c, n), func(b *testing.B) {
				schema, recs := bboxBatches(b, n)
				o, _ := CurveOrder(c)
				s, err := NewSorter(o, schema, SortOptions{Extent: spatial.World})
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				defer cpuMeter(b, n).report()
				for b.Loop() {
					if _, _, err := s.curvePermutation(recs, n); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkSort measures the whole Sort, gathering included.
func BenchmarkSort(b *testing.B) {
	for _, n := range benchSizes[:2] {
		b.Run(fmt.Sprintf("hilbert/n=%d", n), func(b *testing.B) {
			schema, recs := bboxBatches(b, n)
			o, _ := CurveOrder("hilbert")
			s, err := NewSorter(o, schema, SortOptions{})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			defer cpuMeter(b, n).report()
			for b.Loop() {
				out, err := s.Sort(recs, 1<<16)
				if err != nil {
					b.Fatal(err)
				}
				for _, r := range out {
					r.Release()
				}
			}
		})
	}
}

// BenchmarkGather gathers 100,000 rows of four doubles, an int64 and a
// 21-byte binary (a WKB point's size) from batches of 5,000 rows in a
// random order: what a sorted run and the merge do with every row.
func BenchmarkGather(b *testing.B) {
	fields := []arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "wkb", Type: arrow.BinaryTypes.Binary}}
	for _, c := range []string{"xmin", "ymin", "xmax", "ymax"} {
		fields = append(fields, arrow.Field{Name: c, Type: arrow.PrimitiveTypes.Float64})
	}
	sc := arrow.NewSchema(fields, nil)
	const rows, per = 100_000, 5_000
	rng := rand.New(rand.NewPCG(3, 4))
	var recs []arrow.RecordBatch
	for lo := 0; lo < rows; lo += per {
		bld := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		for i := range per {
			bld.Field(0).(*array.Int64Builder).Append(int64(lo + i))
			bld.Field(1).(*array.BinaryBuilder).Append(make([]byte, 21))
			for c := 2; c < 6; c++ {
				bld.Field(c).(*array.Float64Builder).Append(rng.Float64())
			}
		}
		recs = append(recs, bld.NewRecordBatch())
		bld.Release()
	}
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	perm := make([]int32, rows)
	for i, p := range rng.Perm(rows) {
		perm[i] = int32(p)
	}
	b.ResetTimer()
	defer cpuMeter(b, rows).report()
	for range b.N {
		out, err := Gather(sc, recs, perm, nil)
		if err != nil {
			b.Fatal(err)
		}
		out.Release()
	}
}
