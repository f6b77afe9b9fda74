package cluster

import (
	"math"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestSorterColumnTypes sorts a single column of each supported type, in
// two batches, and checks the output values are in Iceberg order with
// nulls where the order puts them.
func TestSorterColumnTypes(t *testing.T) {
	f32 := []float32{3, -1, float32(math.NaN()), float32(math.Copysign(0, -1)), 0, float32(math.Inf(-1)), 2}
	tests := []struct {
		name  string
		typ   arrow.DataType
		build func(b array.Builder, i int) // appends value i of 7, or a null
		value func(a arrow.Array, i int) float64
	}{
		{"float32", arrow.PrimitiveTypes.Float32,
			func(b array.Builder, i int) { b.(*array.Float32Builder).Append(f32[i]) },
			func(a arrow.Array, i int) float64 { return float64(a.(*array.Float32).Value(i)) }},
		{"date32", arrow.FixedWidthTypes.Date32,
			func(b array.Builder, i int) { b.(*array.Date32Builder).Append(arrow.Date32(int32(i*37%11) - 5)) },
			func(a arrow.Array, i int) float64 { return float64(a.(*array.Date32).Value(i)) }},
		{"date64", arrow.FixedWidthTypes.Date64,
			func(b array.Builder, i int) {
				b.(*array.Date64Builder).Append(arrow.Date64(int64(i*37%11-5) * 86400000))
			},
			func(a arrow.Array, i int) float64 { return float64(a.(*array.Date64).Value(i)) }},
		{"int32", arrow.PrimitiveTypes.Int32,
			func(b array.Builder, i int) { b.(*array.Int32Builder).Append(int32(i*37%11) - 5) },
			func(a arrow.Array, i int) float64 { return float64(a.(*array.Int32).Value(i)) }},
		{"uint64", arrow.PrimitiveTypes.Uint64,
			func(b array.Builder, i int) { b.(*array.Uint64Builder).Append(uint64(i*37%11) << 60) },
			func(a arrow.Array, i int) float64 { return float64(a.(*array.Uint64).Value(i)) }},
	}
	for _, tc := range tests {
		for _, expr := range []string{"v", "v DESC", "v NULLS LAST", "v DESC NULLS FIRST"} {
			t.Run(tc.name+"/"+expr, func(t *testing.T) {
				schema := arrow.NewSchema([]arrow.Field{{Name: "v", Type: tc.typ, Nullable: true}}, nil)
				var recs []arrow.RecordBatch
				for half := range 2 {
					b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
					for i := half * 4; i < min(7, half*4+4); i++ {
						tc.build(b.Field(0), i)
						if i == half*4+1 {
							b.Field(0).AppendNull()
						}
					}
					recs = append(recs, b.NewRecordBatch())
					b.Release()
				}
				defer func() {
					for _, r := range recs {
						r.Release()
					}
				}()
				o, err := ParseOrder(expr)
				if err != nil {
					t.Fatal(err)
				}
				s, err := NewSorter(o, schema, SortOptions{})
				if err != nil {
					t.Fatal(err)
				}
				out, err := s.Sort(recs, 4)
				if err != nil {
					t.Fatal(err)
				}
				var vals []float64
				var nulls []int
				for _, r := range out {
					a := r.Column(0)
					for i := range a.Len() {
						if a.IsNull(i) {
							nulls = append(nulls, len(vals))
							vals = append(vals, 0)
							continue
						}
						vals = append(vals, tc.value(a, i))
					}
					r.Release()
				}
				if len(vals) != 9 || len(nulls) != 2 {
					t.Fatalf("got %d values with nulls at %v, want 9 with 2 nulls", len(vals), nulls)
				}
				f := o.Fields[0]
				wantNulls := []int{0, 1}
				if f.Nulls == NullsLast {
					wantNulls = []int{7, 8}
				}
				if !slices.Equal(nulls, wantNulls) {
					t.Fatalf("nulls at %v, want %v", nulls, wantNulls)
				}
				rest := vals[2:]
				if f.Nulls == NullsLast {
					rest = vals[:7]
				}
				cmp := javaCompare
				if f.Direction == Desc {
					cmp = func(a, b float64) int { return javaCompare(b, a) }
				}
				if !slices.IsSortedFunc(rest, cmp) {
					t.Fatalf("values out of order: %v", rest)
				}
			})
		}
	}
}
