package cluster

import (
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/geoarrow/geoarrow-go"

	"github.com/geocompact/geocompact/spatial"
)

// row is one test row; a nil box is a null bbox.
type row struct {
	id    int64
	box   *spatial.Bound
	ts    *int64 // timestamp, nil = null
	score float64
	name  *string
}

var wkbType = geoarrow.NewWKBType(geoarrow.WKBWithBinaryStorage())

func testSchema() *arrow.Schema {
	fields := []arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}
	for _, c := range spatial.BBoxColumns {
		fields = append(fields, arrow.Field{Name: c, Type: arrow.PrimitiveTypes.Float64, Nullable: true})
	}
	fields = append(fields,
		arrow.Field{Name: "bbox", Type: arrow.StructOf(
			arrow.Field{Name: "xmin", Type: arrow.PrimitiveTypes.Float64},
			arrow.Field{Name: "ymin", Type: arrow.PrimitiveTypes.Float64},
			arrow.Field{Name: "xmax", Type: arrow.PrimitiveTypes.Float64},
			arrow.Field{Name: "ymax", Type: arrow.PrimitiveTypes.Float64}), Nullable: true},
		arrow.Field{Name: "geometry", Type: wkbType, Nullable: true},
		arrow.Field{Name: "ts", Type: arrow.FixedWidthTypes.Timestamp_us, Nullable: true},
		arrow.Field{Name: "score", Type: arrow.PrimitiveTypes.Float64},
		arrow.Field{Name: "small", Type: arrow.PrimitiveTypes.Int32},
		arrow.Field{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	)
	return arrow.NewSchema(fields, nil)
}

// wkbPolygon returns the little-endian WKB of the rectangle b.
func wkbPolygon(b spatial.Bound) []byte {
	buf := []byte{1}
	buf = binary.LittleEndian.AppendUint32(buf, 3) // polygon
	buf = binary.LittleEndian.AppendUint32(buf, 1) // one ring
	buf = binary.LittleEndian.AppendUint32(buf, 5) // five points
	for _, p := range [][2]float64{{b.MinX, b.MinY}, {b.MaxX, b.MinY}, {b.MaxX, b.MaxY}, {b.MinX, b.MaxY}, {b.MinX, b.MinY}} {
		buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(p[0]))
		buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(p[1]))
	}
	return buf
}

func buildBatch(t testing.TB, rows []row) arrow.RecordBatch {
	t.Helper()
	b := array.NewRecordBuilder(memory.DefaultAllocator, testSchema())
	defer b.Release()
	for _, r := range rows {
		b.Field(0).(*array.Int64Builder).Append(r.id)
		cov := b.Field(5).(*array.StructBuilder)
		geom := b.Field(6).(interface{ StorageBuilder() array.Builder }).StorageBuilder().(*array.BinaryBuilder)
		if r.box == nil {
			for i := 1; i <= 4; i++ {
				b.Field(i).AppendNull()
			}
			cov.AppendNull()
			geom.AppendNull()
		} else {
			vals := [4]float64{r.box.MinX, r.box.MinY, r.box.MaxX, r.box.MaxY}
			cov.Append(true)
			for i, v := range vals {
				b.Field(1 + i).(*array.Float64Builder).Append(v)
				cov.FieldBuilder(i).(*array.Float64Builder).Append(v)
			}
			if r.box.IsEmpty() {
				geom.Append([]byte{1, 3, 0, 0, 0, 0, 0, 0, 0}) // POLYGON EMPTY
			} else {
				geom.Append(wkbPolygon(*r.box))
			}
		}
		if r.ts == nil {
			b.Field(7).AppendNull()
		} else {
			b.Field(7).(*array.TimestampBuilder).Append(arrow.Timestamp(*r.ts))
		}
		b.Field(8).(*array.Float64Builder).Append(r.score)
		b.Field(9).(*array.Int32Builder).Append(int32(r.id % 7))
		if r.name == nil {
			b.Field(10).AppendNull()
		} else {
			b.Field(10).(*array.StringBuilder).Append(*r.name)
		}
	}
	return b.NewRecordBatch()
}

// randomRows returns n rows with ids 0..n-1: boxes in [0,100]², a few
// null, empty and NaN boxes, duplicated boxes (for stability), null
// timestamps, special floats and repeated names.
func randomRows(rng *rand.Rand, n int) []row {
	rows := make([]row, n)
	names := []string{"a", "b", "ab", "", "zz", "b\x00"}
	floats := []float64{math.Inf(-1), -1, math.Copysign(0, -1), 0, 1, math.Inf(1), math.NaN(), 2.5}
	for i := range rows {
		r := row{id: int64(i), score: floats[rng.IntN(len(floats))]}
		switch rng.IntN(20) {
		case 0: // null
		case 1:
			e := spatial.EmptyBound()
			r.box = &e
		case 2:
			r.box = &spatial.Bound{MinX: math.NaN(), MinY: 1, MaxX: 2, MaxY: 3}
		case 3, 4: // a shared box: equal keys
			r.box = &spatial.Bound{MinX: 10, MinY: 20, MaxX: 12, MaxY: 22}
		default:
			x, y := rng.Float64()*100, rng.Float64()*100
			r.box = &spatial.Bound{MinX: x, MinY: y, MaxX: x + rng.Float64(), MaxY: y + rng.Float64()}
		}
		if rng.IntN(5) > 0 {
			ts := rng.Int64N(1000) - 500
			r.ts = &ts
		}
		if rng.IntN(6) > 0 {
			s := names[rng.IntN(len(names))]
			r.name = &s
		}
		rows[i] = r
	}
	return rows
}

// batches splits rows into batches of uneven sizes.
func batches(t testing.TB, rows []row, sizes ...int) []arrow.RecordBatch {
	t.Helper()
	var out []arrow.RecordBatch
	for i := 0; len(rows) > 0; i++ {
		n := min(len(rows), sizes[i%len(sizes)])
		out = append(out, buildBatch(t, rows[:n]))
		rows = rows[n:]
	}
	t.Cleanup(func() {
		for _, r := range out {
			r.Release()
		}
	})
	return out
}

func mustSorter(t testing.TB, expr string, opts SortOptions) *Sorter {
	t.Helper()
	o, err := ParseOrder(expr)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSorter(o, testSchema(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// sortedIDs sorts recs and returns the ids in output order, checking the
// batch sizes and schema and releasing the output.
func sortedIDs(t testing.TB, s *Sorter, recs []arrow.RecordBatch, batchRows int) []int64 {
	t.Helper()
	out, err := s.Sort(recs, batchRows)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for i, r := range out {
		if !r.Schema().Equal(testSchema()) {
			t.Fatalf("batch %d has schema %s", i, r.Schema())
		}
		if r.NumRows() > int64(batchRows) || r.NumRows() < int64(batchRows) && i != len(out)-1 {
			t.Fatalf("batch %d of %d has %d rows, batchRows %d", i, len(out), r.NumRows(), batchRows)
		}
		ids = append(ids, r.Column(0).(*array.Int64).Int64Values()...)
		r.Release()
	}
	return ids
}

// checkRows checks that every column of every output row holds the values
// of the input row with the same id.
func checkRows(t testing.TB, recs, out []arrow.RecordBatch) {
	t.Helper()
	in := map[int64]string{}
	for _, r := range recs {
		for i := range int(r.NumRows()) {
			in[r.Column(0).(*array.Int64).Value(i)] = rowString(r, i)
		}
	}
	for _, r := range out {
		for i := range int(r.NumRows()) {
			id := r.Column(0).(*array.Int64).Value(i)
			if got := rowString(r, i); got != in[id] {
				t.Fatalf("row %d changed:\n got %s\nwant %s", id, got, in[id])
			}
		}
	}
}

func rowString(r arrow.RecordBatch, i int) string {
	var b strings.Builder
	for c, col := range r.Columns() {
		if c > 0 {
			b.WriteString(" | ")
		}
		b.WriteString(col.ValueStr(i))
	}
	return b.String()
}

func checkPermutation(t testing.TB, ids []int64, n int) {
	t.Helper()
	got := slices.Sorted(slices.Values(ids))
	for i, id := range got {
		if id != int64(i) || len(got) != n {
			t.Fatalf("output ids are not a permutation of 0..%d: %v", n-1, got)
		}
	}
}

func boxKey(k Keyer, r row) uint64 {
	if r.box == nil {
		return NullKey
	}
	return k.Key(*r.box)
}

// TestSorterCurves sorts with each spatial source and checks the output
// against keys computed independently by the Keyer for each row: globally
// non-decreasing across batches, stable among equal keys, rows without a
// position last, every row once.
func TestSorterCurves(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	rows := randomRows(rng, 1000)
	recs := batches(t, rows, 100, 1, 333, 17)
	ext := spatial.Bound{MinX: 0, MinY: 0, MaxX: 101, MaxY: 101}
	h, _ := NewHilbert(ext, 32)
	z, _ := NewZOrder(ext, 32)
	tests := []struct {
		expr string
		k    Keyer
	}{
		{"hilbert()", h},
		{"hilbert(bbox)", h},
		{"hilbert(geometry)", h},
		{"zorder()", z},
		{"zorder(geometry)", z},
	}
	for _, tc := range tests {
		t.Run(tc.expr, func(t *testing.T) {
			s := mustSorter(t, tc.expr, SortOptions{Extent: ext})
			out, err := s.Sort(recs, 64)
			if err != nil {
				t.Fatal(err)
			}
			checkRows(t, recs, out)
			for _, r := range out {
				r.Release()
			}
			ids := sortedIDs(t, s, recs, 64)
			checkPermutation(t, ids, len(rows))
			for i := 1; i < len(ids); i++ {
				a, b := rows[ids[i-1]], rows[ids[i]]
				ka, kb := boxKey(tc.k, a), boxKey(tc.k, b)
				if ka > kb || ka == kb && a.id > b.id {
					t.Fatalf("rows %d (key %d) and %d (key %d) out of order at %d", a.id, ka, b.id, kb, i)
				}
			}
			if last := rows[ids[len(ids)-1]]; boxKey(tc.k, last) != NullKey {
				t.Fatalf("last row %d has a position", last.id)
			}
		})
	}
}

// TestSorterExtentFromData checks that an empty extent means the extent of
// the centres, and that Keys clamps rows outside a given extent.
func TestSorterExtentFromData(t *testing.T) {
	rows := []row{
		{id: 0, box: &spatial.Bound{MinX: 10, MinY: 10, MaxX: 10, MaxY: 10}},
		{id: 1, box: &spatial.Bound{MinX: 20, MinY: 10, MaxX: 20, MaxY: 10}},
		{id: 2, box: &spatial.Bound{MinX: 10, MinY: 30, MaxX: 10, MaxY: 30}},
		{id: 3, box: &spatial.Bound{MinX: -1e9, MinY: -1e9, MaxX: -1e9, MaxY: -1e9}},
		{id: 4, box: &spatial.Bound{MinX: 1e9, MinY: -1e9, MaxX: 1e9, MaxY: -1e9}},
	}
	recs := batches(t, rows, 5)
	s := mustSorter(t, "hilbert()", SortOptions{Extent: spatial.Bound{MinX: 10, MinY: 10, MaxX: 20, MaxY: 30}, Bits: 8})
	keys, err := s.Keys(recs[0])
	if err != nil {
		t.Fatal(err)
	}
	if keys[3] != keys[0] || keys[0] != 0 {
		t.Errorf("row outside the lower-left corner: key %d, corner %d, want both 0", keys[3], keys[0])
	}
	if keys[4] != keys[1] || keys[1] != 1<<16-1 {
		t.Errorf("row outside the lower-right corner: key %d, corner %d, want both %d", keys[4], keys[1], 1<<16-1)
	}
	auto := mustSorter(t, "hilbert()", SortOptions{Bits: 8})
	e, err := auto.Extent(recs)
	if err != nil {
		t.Fatal(err)
	}
	if want := (spatial.Bound{MinX: -1e9, MinY: -1e9, MaxX: 1e9, MaxY: 30}); e != want {
		t.Errorf("Extent = %+v, want %+v", e, want)
	}
}

// icebergLess is the reference for linear orders: Iceberg's null placement
// and Java's double order, field by field.
func icebergLess(o Order, a, b row) int {
	for _, f := range o.Fields {
		var an, bn bool
		var c int
		switch f.Column {
		case "ts":
			an, bn = a.ts == nil, b.ts == nil
			if !an && !bn {
				c = cmpU64(OrderedInt64(*a.ts), OrderedInt64(*b.ts))
			}
		case "score":
			c = javaCompare(a.score, b.score)
		case "name":
			an, bn = a.name == nil, b.name == nil
			if !an && !bn {
				c = strings.Compare(*a.name, *b.name)
			}
		case "small":
			c = int(a.id%7 - b.id%7)
		case "id":
			c = cmpU64(OrderedInt64(a.id), OrderedInt64(b.id))
		}
		switch {
		case an && bn:
			continue
		case an || bn:
			first := f.Nulls == NullsFirst
			if an == first {
				return -1
			}
			return 1
		}
		if f.Direction == Desc {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

func TestSorterLinear(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	rows := randomRows(rng, 700)
	recs := batches(t, rows, 50, 250, 3)
	for _, expr := range []string{
		"score",
		"score DESC",
		"ts NULLS LAST",
		"ts DESC, score",
		"name, score DESC NULLS FIRST",
		"name DESC NULLS FIRST, ts",
		"small, ts DESC NULLS FIRST, name",
		"id DESC",
	} {
		t.Run(expr, func(t *testing.T) {
			s := mustSorter(t, expr, SortOptions{})
			ids := sortedIDs(t, s, recs, 100)
			checkPermutation(t, ids, len(rows))
			want := make([]int64, len(rows))
			for i := range want {
				want[i] = int64(i)
			}
			slices.SortStableFunc(want, func(a, b int64) int { return icebergLess(s.Order(), rows[a], rows[b]) })
			if !slices.Equal(ids, want) {
				for i := range ids {
					if ids[i] != want[i] {
						t.Fatalf("first difference at %d: got id %d, want %d", i, ids[i], want[i])
					}
				}
			}
		})
	}
}

// TestSorterNumericCurve checks zorder and hilbert over numeric columns:
// small integer ranges are exact, so z-order is monotone in each column.
func TestSorterNumericCurve(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	rows := randomRows(rng, 300)
	recs := batches(t, rows, 128)
	s := mustSorter(t, "zorder(small, ts)", SortOptions{})
	ids := sortedIDs(t, s, recs, 1000)
	checkPermutation(t, ids, len(rows))
	pos := make([]int, len(rows))
	for i, id := range ids {
		pos[id] = i
	}
	for _, a := range rows {
		for _, b := range rows {
			if a.ts == nil || b.ts == nil {
				continue
			}
			if a.id%7 <= b.id%7 && *a.ts <= *b.ts && (a.id%7 != b.id%7 || *a.ts != *b.ts) && pos[a.id] > pos[b.id] {
				t.Fatalf("row %d (%d, %d) after row %d (%d, %d)", a.id, a.id%7, *a.ts, b.id, b.id%7, *b.ts)
			}
		}
	}
	for _, id := range ids[len(ids)-countNil(rows):] {
		if rows[id].ts != nil {
			t.Fatalf("row %d with a timestamp among the null ones at the end", id)
		}
	}
	for _, expr := range []string{"hilbert(small, ts, score)", "hilbert(geometry, small, id)", "zorder(bbox, ts)"} {
		for _, norm := range []Normalization{NormalizeExtent, NormalizeQuantile} {
			s := mustSorter(t, expr, SortOptions{Normalize: norm})
			checkPermutation(t, sortedIDs(t, s, recs, 77), len(rows))
		}
	}
}

func countNil(rows []row) int {
	n := 0
	for _, r := range rows {
		if r.ts == nil {
			n++
		}
	}
	return n
}

// TestSorterQuantile checks that quantile normalisation spreads skewed data
// over the grid where extent normalisation crowds it into few cells.
func TestSorterQuantile(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	rows := make([]row, 2000)
	for i := range rows {
		x := math.Pow(rng.Float64(), 8) * 1000 // dense near 0
		y := rng.Float64()
		rows[i] = row{id: int64(i), box: &spatial.Bound{MinX: x, MinY: y, MaxX: x, MaxY: y}}
	}
	recs := batches(t, rows, 2000)
	distinct := func(norm Normalization) int {
		s := mustSorter(t, "hilbert()", SortOptions{Normalize: norm, Bits: 4})
		keys, err := s.Keys(recs[0])
		if err != nil {
			t.Fatal(err)
		}
		return len(slices.Compact(slices.Sorted(slices.Values(keys))))
	}
	e, q := distinct(NormalizeExtent), distinct(NormalizeQuantile)
	if q <= e || q < 200 {
		t.Fatalf("distinct cells: quantile %d, extent %d", q, e)
	}
	s := mustSorter(t, "hilbert()", SortOptions{Normalize: NormalizeQuantile})
	checkPermutation(t, sortedIDs(t, s, recs, 500), len(rows))
}

func TestSorterErrors(t *testing.T) {
	tests := []struct{ expr, want string }{
		{"nope", `cluster: sort order: column "nope" not in schema`},
		{"ts, nope DESC", `column "nope" not in schema`},
		{"bbox", `column "bbox" of type struct`},
		{"hilbert(name, ts)", `column "name" of type utf8 cannot be a hilbert dimension`},
		{"zorder(ts)", `zorder over ["ts"] has 1 dimensions, want 2 to 4`},
		{"hilbert(geometry, bbox, ts)", `has 5 dimensions`},
		{"zorder(missing, ts)", `column "missing" not in schema`},
	}
	for _, tc := range tests {
		t.Run(tc.expr, func(t *testing.T) {
			o, err := ParseOrder(tc.expr)
			if err != nil {
				t.Fatal(err)
			}
			_, err = NewSorter(o, testSchema(), SortOptions{})
			if err == nil || !errors.Is(err, ErrSortOrder) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("NewSorter error %v, want one containing %q", err, tc.want)
			}
		})
	}
	noSpatial := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	if _, err := NewSorter(Order{Curve: CurveHilbert}, noSpatial, SortOptions{}); err == nil || !strings.Contains(err.Error(), "bbox_minx") {
		t.Errorf("hilbert() without spatial columns: %v", err)
	}
	lin, _ := CurveOrder("linear")
	if _, err := NewSorter(lin, noSpatial, SortOptions{}); err == nil || !strings.Contains(err.Error(), `"bbox_minx"`) {
		t.Errorf("linear without bbox columns: %v", err)
	}
}

func TestSorterBadInput(t *testing.T) {
	if _, err := NewSorter(Order{Curve: CurveHilbert}, testSchema(), SortOptions{Bits: 33}); !errors.Is(err, ErrBits) {
		t.Errorf("33 bits: %v", err)
	}
	s := mustSorter(t, "hilbert()", SortOptions{})
	other := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, other)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).Append(1)
	rec := b.NewRecordBatch()
	defer rec.Release()
	if _, err := s.Sort([]arrow.RecordBatch{rec}, 10); err == nil {
		t.Error("Sort accepted a batch of another schema")
	}
	recs := batches(t, randomRows(rand.New(rand.NewPCG(1, 1)), 10), 10)
	if _, err := s.Sort(recs, 0); err == nil {
		t.Error("Sort accepted batchRows 0")
	}
	out, err := s.Sort(nil, 10)
	if err != nil || len(out) != 0 {
		t.Errorf("Sort(nil) = %v, %v", out, err)
	}
	// A broken WKB value is an error naming the column and row.
	bad := array.NewRecordBuilder(memory.DefaultAllocator, testSchema())
	defer bad.Release()
	r := buildBatch(t, []row{{id: 0, box: &spatial.Bound{MaxX: 1, MaxY: 1}}})
	defer r.Release()
	geo := array.NewExtensionArrayWithStorage(wkbType, func() arrow.Array {
		bb := array.NewBinaryBuilder(memory.DefaultAllocator, arrow.BinaryTypes.Binary)
		defer bb.Release()
		bb.Append([]byte{1, 3, 0})
		return bb.NewArray()
	}())
	defer geo.Release()
	cols := slices.Clone(r.Columns())
	cols[6] = geo
	broken := array.NewRecordBatch(testSchema(), cols, 1)
	defer broken.Release()
	gs := mustSorter(t, "hilbert(geometry)", SortOptions{})
	if _, err := gs.Sort([]arrow.RecordBatch{broken}, 10); err == nil || !strings.Contains(err.Error(), `column "geometry": row 0`) {
		t.Errorf("broken WKB: %v", err)
	}
}

// TestSorterNoLeaks checks that Sort releases everything it allocates
// except the output.
func TestSorterNoLeaks(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	recs := batches(t, randomRows(rand.New(rand.NewPCG(2, 2)), 500), 99)
	for _, expr := range []string{"hilbert()", "name, ts"} {
		s := mustSorter(t, expr, SortOptions{Mem: mem})
		out, err := s.Sort(recs, 64)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range out {
			r.Release()
		}
		mem.AssertSize(t, 0)
	}
}

// project returns recs with only the named columns.
func project(t testing.TB, recs []arrow.RecordBatch, names ...string) []arrow.RecordBatch {
	t.Helper()
	var fields []arrow.Field
	var idx []int
	for _, n := range names {
		i := testSchema().FieldIndices(n)[0]
		idx = append(idx, i)
		fields = append(fields, testSchema().Field(i))
	}
	schema := arrow.NewSchema(fields, nil)
	out := make([]arrow.RecordBatch, len(recs))
	for j, r := range recs {
		cols := make([]arrow.Array, len(idx))
		for k, i := range idx {
			cols[k] = r.Column(i)
		}
		out[j] = array.NewRecordBatch(schema, cols, r.NumRows())
	}
	t.Cleanup(func() {
		for _, r := range out {
			r.Release()
		}
	})
	return out
}

// TestLinearShorthandWithoutBBoxColumns checks that --curve linear on a
// table with only a geometry or covering column sorts by the lower-left
// corner of each row's box, as it would by the bbox columns.
func TestLinearShorthandWithoutBBoxColumns(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	var rows []row
	for _, r := range randomRows(rng, 400) {
		if r.box == nil || !r.box.IsEmpty() { // keep null and ordinary boxes
			rows = append(rows, r)
		}
	}
	recs := batches(t, rows, 90)
	lin, _ := CurveOrder("linear")
	full, err := NewSorter(lin, testSchema(), SortOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := sortedIDs(t, full, recs, 1000)
	for _, col := range []string{"geometry", "bbox"} {
		t.Run(col, func(t *testing.T) {
			sub := project(t, recs, "id", col)
			s, err := NewSorter(lin, sub[0].Schema(), SortOptions{})
			if err != nil {
				t.Fatal(err)
			}
			out, err := s.Sort(sub, 1000)
			if err != nil {
				t.Fatal(err)
			}
			var got []int64
			for _, r := range out {
				got = append(got, r.Column(0).(*array.Int64).Int64Values()...)
				r.Release()
			}
			if !slices.Equal(got, want) {
				t.Fatalf("order differs from sorting by the bbox columns:\n got %v\nwant %v", got[:20], want[:20])
			}
		})
	}
}
